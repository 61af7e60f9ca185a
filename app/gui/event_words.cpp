// The inspector's words for trace event kinds and typed fields (see strings.h): part of the
// GUI's catalogue, kept apart from REDLAB_GUI_STRINGS because they are looked up by the
// trace's own names, not by an id. tests/gui/strings_test.cpp holds them to
// docs/trace-format.md (every documented kind) and to REDLAB_TRACE_FIELDS (every field).
#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "app/gui/strings.h"

namespace redlab::gui {

namespace {

struct KindEntry {
  std::string_view kind;
  std::array<const char*, kLangCount> text;
};

// clang-format off
const KindEntry kKinds[] = {
    // The run, servers and resources.
    {"run_start", {"run starts", "начало прогона", "začátek běhu"}},
    {"run_end", {"run ends", "конец прогона", "konec běhu"}},
    {"run_bound", {"run bound reached", "достигнут предел прогона", "dosažen limit běhu"}},
    {"server_start", {"server starts", "сервер запущен", "server spuštěn"}},
    {"resource_start", {"resource ready", "ресурс готов", "prostředek připraven"}},
    {"setup", {"setup command", "подготовительная команда", "přípravný příkaz"}},
    {"narration", {"narration", "пояснение", "komentář"}},
    {"fault", {"fault", "сбой", "porucha"}},
    {"server_command", {"command run by a fault", "команда, выполненная сбоем", "příkaz spuštěný poruchou"}},
    {"backend_trouble", {"backend trouble", "проблема с бэкендом", "potíž s backendem"}},
    {"violation", {"violation", "нарушение", "porušení"}},
    {"check", {"check result", "итог проверки", "výsledek kontroly"}},
    {"expectation", {"expectation", "ожидание", "očekávání"}},
    // Actors and steps.
    {"actor_start", {"actor starts", "участник начинает", "aktér začíná"}},
    {"actor_end", {"actor ends", "участник закончил", "aktér skončil"}},
    {"abandon", {"actor gives up", "участник сдался", "aktér to vzdal"}},
    {"crashed", {"cut short by the crash", "оборвано падением процесса", "přerušeno pádem procesu"}},
    {"note", {"note", "заметка", "poznámka"}},
    {"record", {"recorded", "записано", "zaznamenáno"}},
    {"work", {"work", "работа", "práce"}},
    {"work_done", {"work done", "работа закончена", "práce hotova"}},
    {"sleep", {"sleep", "ожидание", "čekání"}},
    {"sleep_done", {"sleep over", "ожидание окончено", "čekání skončilo"}},
    {"lock_acquire", {"tries to take the lock", "попытка взять блокировку", "pokus vzít zámek"}},
    {"lock_acquired", {"lock taken", "блокировка взята", "zámek získán"}},
    {"lock_busy", {"lock busy", "блокировка занята", "zámek je obsazený"}},
    {"redlock_node", {"one master's answer", "ответ одного мастера", "odpověď jednoho mastera"}},
    {"lock_gave_up", {"gave up on the lock", "отказ от блокировки", "vzdal se zámku"}},
    {"hold_end", {"hold ends", "владение закончилось", "držení skončilo"}},
    {"lock_not_held", {"lock not held", "блокировка не удерживается", "zámek není držen"}},
    {"lock_release", {"releases the lock", "снимает блокировку", "uvolňuje zámek"}},
    {"lock_released", {"lock released", "блокировка снята", "zámek uvolněn"}},
    {"lock_lost", {"lock was no longer ours", "блокировка уже не наша", "zámek už nebyl náš"}},
    {"lock_release_failed", {"release failed", "снятие не удалось", "uvolnění selhalo"}},
    {"lock_extend", {"extends the lock", "продлевает блокировку", "prodlužuje zámek"}},
    {"lock_extended", {"lock extended", "блокировка продлена", "zámek prodloužen"}},
    {"lock_extend_failed", {"extend failed", "продление не удалось", "prodloužení selhalo"}},
    {"watchdog_start", {"watchdog starts", "watchdog запущен", "watchdog spuštěn"}},
    {"watchdog_stop", {"watchdog stops", "watchdog остановлен", "watchdog zastaven"}},
    {"resource_write", {"write to the resource", "запись в ресурс", "zápis do prostředku"}},
    {"resource_accept", {"write accepted", "запись принята", "zápis přijat"}},
    {"resource_reject", {"write rejected", "запись отклонена", "zápis odmítnut"}},
    {"tx_attempt", {"transaction attempt", "попытка транзакции", "pokus o transakci"}},
    {"tx_committed", {"transaction committed", "транзакция выполнена", "transakce provedena"}},
    {"tx_aborted", {"transaction aborted (EXEC nil)", "транзакция отменена (EXEC вернул nil)", "transakce zrušena (EXEC vrátil nil)"}},
    {"tx_skipped", {"transaction skipped", "транзакция пропущена", "transakce vynechána"}},
    {"tx_error", {"transaction error", "ошибка транзакции", "chyba transakce"}},
    {"tx_gave_up", {"transaction given up", "отказ от транзакции", "transakce vzdána"}},
    {"listen", {"starts listening", "начинает слушать", "začíná poslouchat"}},
    {"listen_end", {"stops listening", "перестаёт слушать", "přestává poslouchat"}},
    {"publish", {"publishes", "публикует", "publikuje"}},
    {"published", {"published", "опубликовано", "publikováno"}},
    {"subscribe_failed", {"subscribe failed", "подписка не удалась", "odběr selhal"}},
    {"consume_error", {"stream read failed", "чтение потока не удалось", "čtení proudu selhalo"}},
    {"stream_message", {"stream entry received", "получена запись потока", "přijat záznam proudu"}},
    {"context", {"context made", "создан контекст", "vytvořen kontext"}},
    {"context_cancel", {"context cancelled", "контекст отменён", "kontext zrušen"}},
    // Client calls and the pool.
    {"call", {"call", "вызов", "volání"}},
    {"command", {"command sent", "команда отправлена", "příkaz odeslán"}},
    {"reply", {"reply", "ответ", "odpověď"}},
    {"read_timeout", {"read timeout", "тайм-аут чтения", "časový limit čtení"}},
    {"eof", {"connection closed by the other side", "соединение закрыто другой стороной", "spojení zavřela druhá strana"}},
    {"no_reply", {"no reply", "нет ответа", "bez odpovědi"}},
    {"backoff", {"pause before a retry", "пауза перед повтором", "prodleva před opakováním"}},
    {"result", {"result", "результат", "výsledek"}},
    {"script_fallback", {"EVALSHA fell back to EVAL", "EVALSHA заменён на EVAL", "EVALSHA nahrazen EVAL"}},
    {"watch_retry", {"WATCH retry", "повтор WATCH", "opakování WATCH"}},
    {"watch_gave_up", {"WATCH retries given up", "отказ от повторов WATCH", "opakování WATCH vzdáno"}},
    {"pool_hit", {"connection from the pool", "соединение из пула", "spojení z poolu"}},
    {"pool_miss", {"pool empty: a new connection", "пул пуст: новое соединение", "pool prázdný: nové spojení"}},
    {"pool_wait", {"waits for a connection", "ждёт соединения", "čeká na spojení"}},
    {"pool_timeout", {"pool timeout", "тайм-аут пула", "časový limit poolu"}},
    {"pool_wait_deadline", {"pool wait ended by the context (deadline or cancel)", "ожидание пула прервано контекстом (дедлайн или отмена)", "čekání na pool ukončil kontext (lhůta nebo zrušení)"}},
    {"dial", {"connects", "подключается", "připojuje se"}},
    {"dial_ok", {"connected", "подключено", "připojeno"}},
    {"dial_timeout", {"dial timeout", "тайм-аут подключения", "časový limit připojení"}},
    {"dial_failed", {"dial failed", "подключение не удалось", "připojení selhalo"}},
    {"pool_breaker_open", {"dial breaker opens", "предохранитель подключений сработал", "pojistka připojování sepnula"}},
    {"pool_breaker_fail", {"dial refused by the breaker", "подключение отклонено предохранителем", "připojení odmítla pojistka"}},
    {"pool_breaker_reset", {"dial breaker reset", "предохранитель сброшен", "pojistka obnovena"}},
    {"conn_close", {"connection closed", "соединение закрыто", "spojení zavřeno"}},
    {"pool_stats", {"pool statistics", "статистика пула", "statistika poolu"}},
    {"pool_stats_sample", {"pool statistics sample", "замер статистики пула", "vzorek statistiky poolu"}},
    {"pubsub_confirm", {"subscription confirmed", "подписка подтверждена", "odběr potvrzen"}},
    {"pubsub_message", {"message received", "сообщение получено", "zpráva přijata"}},
    {"pubsub_dropped", {"message dropped: channel full", "сообщение выброшено: канал полон", "zpráva zahozena: kanál je plný"}},
    {"pubsub_disconnected", {"subscriber disconnected", "подписчик отключён", "odběratel odpojen"}},
    {"pubsub_resubscribe", {"subscribes again", "подписывается снова", "znovu se přihlašuje k odběru"}},
    {"pubsub_gave_up", {"subscriber gave up", "подписчик сдался", "odběratel to vzdal"}},
    {"pubsub_unexpected", {"unexpected pub/sub reply", "неожиданный ответ pub/sub", "nečekaná odpověď pub/sub"}},
    // The network.
    {"net_drop", {"message lost in the network", "сообщение потеряно в сети", "zprávu ztratila síť"}},
    {"net_refused", {"connection refused", "соединение отклонено", "spojení odmítnuto"}},
    {"net_disconnect", {"connection reset", "соединение сброшено", "spojení přerušeno"}},
    {"net_server_close", {"server closed the connection", "сервер закрыл соединение", "server zavřel spojení"}},
    {"net_buffer_lost", {"unread replies lost", "непрочитанные ответы потеряны", "nepřečtené odpovědi ztraceny"}},
    {"net_slow", {"extra latency", "добавочная задержка", "přidaná latence"}},
    {"net_refuse_begin", {"new connections refused", "новые соединения отклоняются", "nová spojení jsou odmítána"}},
    {"net_refuse_end", {"connections accepted again", "соединения снова принимаются", "spojení jsou znovu přijímána"}},
    {"net_partition", {"network partition", "разрыв сети", "rozdělení sítě"}},
    {"net_heal", {"partition healed", "связь восстановлена", "spojení obnoveno"}},
    {"net_loss", {"network loss", "потери в сети", "ztráty v síti"}},
    // The server's own events.
    {"clock_jump", {"clock jump", "скачок часов", "skok hodin"}},
    {"server_restart", {"server restart", "перезапуск сервера", "restart serveru"}},
    {"server_down", {"server down", "сервер недоступен", "server nedostupný"}},
    {"server_up", {"server up", "сервер снова доступен", "server znovu dostupný"}},
    {"served", {"the server serves a command", "сервер выполняет команду", "server obsluhuje příkaz"}},
    {"key_set", {"key written", "ключ записан", "klíč zapsán"}},
    {"key_del", {"key deleted", "ключ удалён", "klíč smazán"}},
    {"key_expired", {"key expired", "ключ истёк", "klíč vypršel"}},
    {"key_final", {"key's value at the end of the run", "значение ключа в конце прогона", "hodnota klíče na konci běhu"}},
    {"blocked", {"client blocked", "клиент заблокирован", "klient zablokován"}},
    {"unblocked", {"client woken", "клиент разблокирован", "klient odblokován"}},
    {"script_start", {"long script starts", "долгий скрипт начался", "dlouhý skript začal"}},
    {"script_end", {"long script ends", "долгий скрипт закончился", "dlouhý skript skončil"}},
    {"script_busy", {"script past busy-reply-threshold", "скрипт дольше busy-reply-threshold", "skript déle než busy-reply-threshold"}},
    {"busy_reply", {"BUSY reply", "ответ BUSY", "odpověď BUSY"}},
    {"script_killed", {"script killed", "скрипт прерван", "skript ukončen"}},
    {"client_cut", {"the server cut the client", "сервер отключил клиента", "server odpojil klienta"}},
    {"slowlog", {"SLOWLOG entry", "запись в SLOWLOG", "záznam v SLOWLOG"}},
    {"slowlog_reset", {"SLOWLOG emptied", "SLOWLOG очищен", "SLOWLOG vyprázdněn"}},
    {"repl_propagate", {"sent to the replicas", "отправлено репликам", "odesláno replikám"}},
    {"repl_apply", {"the replica receives the stream", "реплика получает поток", "replika přijímá proud"}},
    {"repl_ack", {"a replica acknowledges", "реплика подтверждает", "replika potvrzuje"}},
    {"repl_promote", {"the replica becomes the primary", "реплика становится основным сервером", "replika se stává primárem"}},
    {"repl_link", {"replication link", "канал репликации", "replikační spojení"}},
    {"repl_failover", {"failover: the name leads to the replica", "failover: имя ведёт к реплике", "failover: jméno vede k replice"}},
};

// clang-format on

struct ValueEntry {
  F field;
  std::string_view value;
  std::array<const char*, kLangCount> text;
};

// The enumerated values of some fields (trace-format.md); other values are data (keys, tokens,
// replies) or identifiers and are shown as they are.
// clang-format off
const ValueEntry kValues[] = {
    {F::source, "fake", {"the server's own events", "события самого сервера", "vlastní události serveru"}},
    {F::source, "clients", {"as seen by clients", "глазами клиентов", "jak je vidí klienti"}},
    {F::fault, "pause", {"pause", "пауза", "pauza"}},
    {F::fault, "resume", {"resume", "продолжение", "pokračování"}},
    {F::fault, "crash", {"the process crashes", "процесс падает", "proces spadne"}},
    {F::fault, "crash_restart", {"the process is started again", "процесс запущен заново", "proces spuštěn znovu"}},
    {F::fault, "disconnect", {"connections dropped", "соединения разорваны", "spojení přerušena"}},
    {F::fault, "refuse", {"new connections refused", "новые соединения отклоняются", "nová spojení odmítána"}},
    {F::fault, "refuse_end", {"connections accepted again", "соединения снова принимаются", "spojení znovu přijímána"}},
    {F::fault, "partition", {"partition", "разрыв сети", "rozdělení sítě"}},
    {F::fault, "partition_end", {"partition healed", "связь восстановлена", "spojení obnoveno"}},
    {F::fault, "latency", {"extra latency", "добавочная задержка", "přidaná latence"}},
    {F::fault, "latency_end", {"extra latency removed", "добавочная задержка снята", "přidaná latence odebrána"}},
    {F::fault, "clock_jump", {"clock jump", "скачок часов", "skok hodin"}},
    {F::fault, "restart", {"restart", "перезапуск", "restart"}},
    {F::fault, "shutdown_nosave", {"SHUTDOWN NOSAVE and restart", "SHUTDOWN NOSAVE и перезапуск", "SHUTDOWN NOSAVE a restart"}},
    {F::fault, "server_crash", {"the server's machine crashes", "машина сервера падает", "stroj serveru spadne"}},
    {F::fault, "script_flush", {"SCRIPT FLUSH", "SCRIPT FLUSH", "SCRIPT FLUSH"}},
    {F::fault, "stall", {"server stalls (DEBUG SLEEP)", "сервер замирает (DEBUG SLEEP)", "server se zastaví (DEBUG SLEEP)"}},
    {F::fault, "failover", {"failover: the replica is promoted", "failover: реплику повышают", "failover: replika je povýšena"}},
    {F::fault, "replica_lag", {"replication lags", "репликация отстаёт", "replikace zaostává"}},
    {F::fault, "replica_lag_end", {"replication lag removed", "отставание репликации снято", "zpoždění replikace odebráno"}},
    {F::fault, "replica_partition", {"replication link cut", "канал репликации разорван", "replikační spojení přerušeno"}},
    {F::fault, "replica_partition_end", {"replication link healed", "канал репликации восстановлен", "replikační spojení obnoveno"}},
    {F::outcome, "committed", {"committed", "выполнена", "provedena"}},
    {F::outcome, "aborted", {"aborted (EXEC nil)", "отменена (EXEC вернул nil)", "zrušena (EXEC vrátil nil)"}},
    {F::outcome, "skipped", {"skipped", "пропущена", "vynechána"}},
    {F::outcome, "error", {"error", "ошибка", "chyba"}},
    {F::method, "del", {"DEL", "DEL", "DEL"}},
    {F::method, "lua", {"Lua script", "Lua-скрипт", "Lua skript"}},
    {F::method, "pubsub", {"pub/sub", "pub/sub", "pub/sub"}},
    {F::method, "stream", {"stream", "поток", "proud"}},
    {F::error_class, "server", {"an error reply", "ответ-ошибка", "chybová odpověď"}},
    {F::error_class, "pool_timeout", {"pool timeout", "тайм-аут пула", "časový limit poolu"}},
    {F::error_class, "dial_timeout", {"dial timeout", "тайм-аут подключения", "časový limit připojení"}},
    {F::error_class, "refused", {"connection refused", "соединение отклонено", "spojení odmítnuto"}},
    {F::error_class, "read_timeout", {"read timeout", "тайм-аут чтения", "časový limit čtení"}},
    {F::error_class, "eof", {"connection closed", "соединение закрыто", "spojení zavřeno"}},
    {F::error_class, "context_deadline", {"context deadline", "дедлайн контекста", "lhůta kontextu"}},
    {F::error_class, "context_canceled", {"context cancelled", "контекст отменён", "kontext zrušen"}},
    {F::result_class, "ok", {"success (err == nil)", "успех (err == nil)", "úspěch (err == nil)"}},
    {F::result_class, "nil", {"redis.Nil: no such key or value", "redis.Nil: нет такого ключа или значения", "redis.Nil: takový klíč nebo hodnota není"}},
    {F::source, "server", {"the server's answer after the run", "ответ сервера после прогона", "odpověď serveru po běhu"}},
    {F::error_class, "tx_failed", {"transaction failed", "транзакция не удалась", "transakce selhala"}},
    {F::error_class, "closed", {"client closed", "клиент закрыт", "klient zavřen"}},
};
// clang-format on

}  // namespace

const char* field_value_words(F field, std::string_view value, Lang lang) {
  for (const ValueEntry& e : kValues)
    if (e.field == field && e.value == value) return e.text[static_cast<size_t>(lang)];
  // A result_class is "ok", "nil" or the error's error_class (client.h result_class): the
  // error classes have their words once, under error_class.
  if (field == F::result_class) return field_value_words(F::error_class, value, lang);
  return nullptr;
}

const char* event_kind_words(std::string_view kind, Lang lang) {
  for (const KindEntry& e : kKinds)
    if (e.kind == kind) return e.text[static_cast<size_t>(lang)];
  return nullptr;
}

const char* field_words(F field, Lang lang) {
  auto pick = [lang](std::array<const char*, kLangCount> words) {
    return words[static_cast<size_t>(lang)];
  };
  // No default: a field added to REDLAB_TRACE_FIELDS without words here is a -Wswitch warning.
  switch (field) {
    case F::lock:
      return pick({"lock", "блокировка", "zámek"});
    case F::key:
      return pick({"key", "ключ", "klíč"});
    case F::db:
      return pick({"database", "база", "databáze"});
    case F::type:
      return pick({"type", "тип", "typ"});
    case F::value:
      return pick({"value", "значение", "hodnota"});
    case F::expire_at_ms:
      return pick({"expires at (server clock, unix ms)", "истекает (часы сервера, unix мс)",
                   "vyprší (hodiny serveru, unix ms)"});
    case F::token:
      return pick({"token", "токен", "token"});
    case F::ttl_us:
      return pick({"TTL", "TTL", "TTL"});
    case F::fence:
      return pick({"fence", "fencing-токен", "fencing token"});
    case F::highest:
      return pick({"highest fence accepted before", "наибольший принятый ранее токен",
                   "nejvyšší dříve přijatý token"});
    case F::resource:
      return pick({"resource", "ресурс", "prostředek"});
    case F::server:
      return pick({"server", "сервер", "server"});
    case F::servers:
      return pick({"servers", "серверы", "servery"});
    case F::quorum:
      return pick({"quorum", "кворум", "kvorum"});
    case F::until_us:
      return pick({"valid until", "действует до", "platný do"});
    case F::host:
      return pick({"client process", "процесс клиента", "proces klienta"});
    case F::argv:
      return pick({"command", "команда", "příkaz"});
    case F::cmd:
      return pick({"command", "команда", "příkaz"});
    case F::count:
      return pick({"count", "количество", "počet"});
    case F::reply:
      return pick({"reply", "ответ", "odpověď"});
    case F::error:
      return pick({"error", "ошибка", "chyba"});
    case F::error_class:
      return pick({"error class", "вид ошибки", "druh chyby"});
    case F::cause:
      return pick({"caused by span", "вызвано интервалом", "způsobil úsek"});
    case F::duration_us:
      return pick({"duration", "длительность", "trvání"});
    case F::for_us:
      return pick({"for", "на", "na"});
    case F::by_us:
      return pick({"by", "на величину", "o"});
    case F::every_us:
      return pick({"every", "каждые", "každých"});
    case F::clock_unix_ms:
      return pick({"server clock (unix ms)", "часы сервера (unix мс)", "hodiny serveru (unix ms)"});
    case F::logged_at_us:
      return pick({"logged at", "записано в", "zapsáno v"});
    case F::timeout_at_us:
      return pick({"times out at", "тайм-аут в", "vyprší v"});
    case F::method:
      return pick({"method", "способ", "způsob"});
    case F::reason:
      return pick({"reason", "причина", "důvod"});
    case F::tries:
      return pick({"tries", "попыток", "pokusů"});
    case F::channel:
      return pick({"channel", "канал", "kanál"});
    case F::message:
      return pick({"message", "сообщение", "zpráva"});
    case F::id:
      return pick({"entry id", "id записи", "id záznamu"});
    case F::group:
      return pick({"group", "группа", "skupina"});
    case F::receivers:
      return pick({"receivers", "получателей", "příjemců"});
    case F::record:
      return pick({"record", "запись", "záznam"});
    case F::fault:
      return pick({"fault", "сбой", "porucha"});
    case F::outcome:
      return pick({"outcome", "исход", "výsledek"});
    case F::hits:
      return pick({"hits", "попаданий", "zásahů"});
    case F::misses:
      return pick({"misses", "промахов", "minutí"});
    case F::timeouts:
      return pick({"timeouts", "тайм-аутов", "vypršení"});
    case F::total:
      return pick({"connections", "соединений", "spojení"});
    case F::idle:
      return pick({"idle", "свободных", "volných"});
    case F::stale:
      return pick({"stale", "устаревших", "zastaralých"});
    case F::check:
      return pick({"check", "проверка", "kontrola"});
    case F::check_kind:
      return pick({"check kind", "вид проверки", "druh kontroly"});
    case F::ok:
      return pick({"held", "выполнено", "splněno"});
    case F::violations:
      return pick({"violations", "нарушений", "porušení"});
    case F::expected:
      return pick({"expected", "ожидалось", "očekáváno"});
    case F::met:
      return pick({"met", "выполнено", "splněno"});
    case F::from_us:
      return pick({"from", "с", "od"});
    case F::to_us:
      return pick({"to", "по", "do"});
    case F::who:
      return pick({"who", "кто", "kdo"});
    case F::note:
      return pick({"note", "заметка", "poznámka"});
    case F::texts:
      return pick({"in every language", "на всех языках", "ve všech jazycích"});
    case F::source:
      return pick({"source", "источник", "zdroj"});
    case F::result_class:
      return pick({"result class", "вид результата", "druh výsledku"});
    case F::offset:
      return pick({"replication offset", "смещение репликации", "offset replikace"});
    case F::context:
      return pick({"context", "контекст", "kontext"});
    case F::count_:
      break;
  }
  return "?";
}

std::vector<std::string> event_fields_words(
    const TraceEvent& e, Lang lang,
    const std::function<std::string(F, std::string_view)>& check_title) {
  std::vector<std::string> out;
  for (const TraceField& f : e.fields) {
    if (f.key == F::texts) continue;  // the note itself, shown in the chosen language above
    std::string value;
    if (const auto* n = std::get_if<int64_t>(&f.value)) {
      // Times and durations in the run's units and decimal mark, like the ruler.
      const std::string_view name = field_info(f.key).name;
      const bool time = name.size() > 3 && name.substr(name.size() - 3) == "_us";
      value = time ? ruler_words(*n, lang) : std::to_string(*n);
    } else if (const auto* s = std::get_if<std::string>(&f.value)) {
      const char* words = field_value_words(f.key, *s, lang);
      value = words ? words
              : check_title && (f.key == F::check || f.key == F::check_kind)
                  ? check_title(f.key, *s)
                  : *s;
    } else {
      for (const std::string& item : std::get<std::vector<std::string>>(f.value))
        value += (value.empty() ? "" : f.key == F::argv ? " " : ", ") + item;
    }
    out.push_back(std::string(field_words(f.key, lang)) + ": " + value);
  }
  return out;
}

std::string event_kind_label(std::string_view kind, Lang lang) {
  const char* words = event_kind_words(kind, lang);
  return words ? words : std::string(kind);
}

}  // namespace redlab::gui

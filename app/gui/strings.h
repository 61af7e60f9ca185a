// The GUI's own words in English, Russian and Czech: one catalogue (this table), chosen with
// the language selector. Everything the GUI draws that is not the scenario's own text (titles,
// story, notes come translated in the scenario file), a Redis command, a key or an actor's name
// comes from here: buttons, menus, the legend, lane and row labels, tooltips, the verdicts'
// words, units. The checks' verdicts are put in words here too, from the violations' typed
// fields and the trace (verdict_words.h), so a Russian screen has no English sentence left.
//
// An entry is X(id, english, russian, czech). Texts may hold positional arguments {0}..{9}
// (trf) and plural forms separated by '|' (plural: English one|many, Russian and Czech
// one|few|many). tests/gui/strings_test.cpp checks that every entry has all three languages,
// the same arguments in each and the right number of plural forms.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/trace.h"

namespace redlab::gui {

enum class Lang : uint8_t { en, ru, cs };
inline constexpr int kLangCount = 3;
// "ru" and "cs"; anything else is English.
Lang lang_of(std::string_view code);
const char* lang_code(Lang lang);

// clang-format off
#define REDLAB_GUI_STRINGS(X) \
  /* ---- Menus ---- */ \
  X(menu_file, "File", "Файл", "Soubor") \
  X(menu_backend, "Backend", "Бэкенд", "Backend") \
  X(menu_view, "View", "Вид", "Zobrazení") \
  X(menu_help, "Help", "Справка", "Nápověda") \
  X(menu_language, "Language", "Язык", "Jazyk") \
  X(file_path_hint, "path/to/scenario-or-trace.json", "путь/к/сценарию-или-трассе.json", "cesta/ke/scénáři-nebo-záznamu.json") \
  X(file_open, "Open", "Открыть", "Otevřít") \
  X(file_open_tip, "A scenario file (runs it) or a saved trace (replays it, no server needed).", "Файл сценария (он будет запущен) или сохранённая трасса (будет воспроизведена, сервер не нужен).", "Soubor scénáře (spustí se) nebo uložený záznam (přehraje se, server není potřeba).") \
  X(file_save_trace, "Save trace", "Сохранить трассу", "Uložit záznam") \
  X(file_export_png, "Export the timeline as PNG", "Сохранить временную шкалу в PNG", "Uložit časovou osu jako PNG") \
  X(file_export_chrome, "Export a Chrome trace", "Экспорт в формате Chrome trace", "Export ve formátu Chrome trace") \
  X(file_export_chrome_tip, "For ui.perfetto.dev or chrome://tracing.", "Для ui.perfetto.dev или chrome://tracing.", "Pro ui.perfetto.dev nebo chrome://tracing.") \
  X(need_path, "type a file path first (File menu)", "сначала введите путь к файлу (меню «Файл»)", "nejdřív zadejte cestu k souboru (nabídka Soubor)") \
  /* ---- Backend ---- */ \
  X(backend_fake, "fake Redis (in-process)", "имитация Redis (в процессе)", "simulovaný Redis (v procesu)") \
  X(backend_spawn, "spawn a redis-server", "запустить свой redis-server", "spustit vlastní redis-server") \
  X(backend_url, "a Redis server by URL", "сервер Redis по URL", "server Redis podle URL") \
  X(backend_tip, "fake: the deterministic in-process Redis (instant runs, then played back).\nspawn / URL: a real server; the run happens live.", "имитация: детерминированный Redis внутри программы (прогон мгновенный, затем воспроизводится).\nсвой сервер / URL: настоящий сервер; прогон идёт вживую.", "simulovaný: deterministický Redis uvnitř programu (běh je okamžitý, pak se přehrává).\nvlastní server / URL: skutečný server; běh probíhá živě.") \
  X(backend_shown, "backend: {0}", "бэкенд: {0}", "backend: {0}") \
  X(time_scale, "time scale", "масштаб времени", "měřítko času") \
  X(time_scale_tip, "Every duration of the scenario (TTLs, work, pauses, timeouts) times this.", "Все длительности сценария (TTL, работа, паузы, тайм-ауты) умножаются на это число.", "Všechny doby scénáře (TTL, práce, pauzy, časové limity) se násobí tímto číslem.") \
  X(server_faults, "allow server faults", "разрешить сбои сервера", "povolit poruchy serveru") \
  X(server_faults_tip, "Allow server-wide faults and config (DEBUG SLEEP, SCRIPT FLUSH, CONFIG SET) on this server. Only on a server that is yours to disturb.", "Разрешить общие для сервера сбои и настройки (DEBUG SLEEP, SCRIPT FLUSH, CONFIG SET). Только на сервере, который можно тревожить.", "Povolit poruchy a nastavení celého serveru (DEBUG SLEEP, SCRIPT FLUSH, CONFIG SET). Jen na serveru, který smíte rušit.") \
  X(seed, "seed", "зерно", "semínko") \
  X(seed_tip, "The seed of the run: the same seed, the same run (fake backend).", "Зерно прогона: то же зерно — тот же прогон (имитация).", "Semínko běhu: stejné semínko, stejný běh (simulovaný backend).") \
  /* ---- Transport ---- */ \
  X(run, "Run", "Запуск", "Spustit") \
  X(run_again, "Run again", "Заново", "Znovu") \
  X(run_tip, "Run the scenario with these choices and play it from the start.", "Запустить сценарий с этими настройками и проиграть с начала.", "Spustit scénář s tímto nastavením a přehrát od začátku.") \
  X(play, "Play", "Пуск", "Přehrát") \
  X(pause, "Pause", "Пауза", "Pauza") \
  X(play_tip, "Play / pause (Space).", "Пуск / пауза (пробел).", "Přehrát / pauza (mezerník).") \
  X(step, "Step", "Шаг", "Krok") \
  X(step_tip, "Move the playhead to the next event.", "Передвинуть курсор к следующему событию.", "Posunout ukazatel na další událost.") \
  X(restart, "Restart", "С начала", "Od začátku") \
  X(restart_tip, "Back to 0 and play (R).", "Вернуться к 0 и проиграть (R).", "Zpět na 0 a přehrát (R).") \
  X(prev_note, "< Note", "< Заметка", "< Poznámka") \
  X(prev_note_tip, "The previous narration note (Left, Page Up).", "Предыдущая заметка рассказа (←, Page Up).", "Předchozí poznámka vyprávění (←, Page Up).") \
  X(next_note, "Note >", "Заметка >", "Poznámka >") \
  X(next_note_tip, "The next narration note (Right, Page Down).", "Следующая заметка рассказа (→, Page Down).", "Další poznámka vyprávění (→, Page Down).") \
  X(next_violation, "Violation >", "Нарушение >", "Porušení >") \
  X(next_violation_tip, "The next violation's start (N; Shift+N: the previous one).", "Начало следующего нарушения (N; Shift+N — предыдущего).", "Začátek dalšího porušení (N; Shift+N: předchozího).") \
  X(next_actor, "Actor >", "Актор >", "Aktér >") \
  X(next_actor_tip, "The next event of the selected event's actor (E; Shift+E: the previous one).", "Следующее событие актора выбранного события (E; Shift+E — предыдущее).", "Další událost aktéra vybrané události (E; Shift+E: předchozí).") \
  X(reveal, "Reveal", "Показать всё", "Odhalit vše") \
  X(hide_future, "Hide the future", "Скрыть будущее", "Skrýt budoucnost") \
  X(reveal_tip, "Reveal: everything at once, the future and the final verdicts (V).\nOtherwise only what has happened up to the playhead is shown.", "Показать всё сразу: будущее и окончательные вердикты (V).\nИначе видно только то, что случилось до курсора.", "Odhalit vše najednou: budoucnost i konečné verdikty (V).\nJinak je vidět jen to, co se stalo do ukazatele.") \
  X(faint, "Future faint", "Будущее бледно", "Budoucnost bledě") \
  X(faint_tip, "Show the future faint instead of hiding it (F).", "Показывать будущее бледным, а не скрывать (F).", "Ukazovat budoucnost bledě místo skrytí (F).") \
  X(stop_at_notes, "Stop at notes", "Стоп на заметках", "Zastavit u poznámek") \
  X(stop_at_notes_tip, "Playing stops at each narration note, for the class to read it (S).", "Проигрывание останавливается на каждой заметке, чтобы класс успел прочитать (S).", "Přehrávání se zastaví u každé poznámky, aby si ji třída přečetla (S).") \
  X(presenter, "Presenter mode", "Режим презентации", "Prezentační režim") \
  X(presenter_tip, "Full-window timeline in large type, driven from the keyboard (P, F5; H: keys).", "Временная шкала на всё окно крупным шрифтом, управление с клавиатуры (P, F5; H — клавиши).", "Časová osa přes celé okno velkým písmem, ovládání klávesnicí (P, F5; H: klávesy).") \
  X(speed, "speed", "скорость", "rychlost") \
  X(speed_tip, "1x = the scenario's own time (a 25 s scenario plays for 25 s).", "1x — собственное время сценария (сценарий на 25 с идёт 25 с).", "1x = vlastní čas scénáře (scénář na 25 s hraje 25 s).") \
  X(follow, "Follow the playhead", "Следовать за курсором", "Sledovat ukazatel") \
  X(follow_tip, "Keep the playhead in view while it moves.", "Держать курсор в поле зрения, пока он движется.", "Držet ukazatel v zorném poli, dokud se pohybuje.") \
  X(larger, "Larger", "Крупнее", "Větší") \
  X(smaller, "Smaller", "Мельче", "Menší") \
  X(normal_size, "Normal size", "Обычный размер", "Normální velikost") \
  X(keys_item, "Keys", "Клавиши", "Klávesy") \
  X(param_tip, "{0}: {1}..{2} {3} (default {4})\nCtrl+click to type a value.", "{0}: {1}..{2} {3} (по умолчанию {4})\nCtrl+щелчок — ввести значение.", "{0}: {1}..{2} {3} (výchozí {4})\nCtrl+klik: zadat hodnotu.") \
  X(variant_tip, "variant {0} ({1})", "вариант {0} ({1})", "varianta {0} ({1})") \
  X(error_prefix, "error: {0}", "ошибка: {0}", "chyba: {0}") \
  X(dismiss_tip, "Dismiss", "Скрыть", "Zavřít") \
  /* ---- Library ---- */ \
  X(scenarios, "Scenarios", "Сценарии", "Scénáře") \
  X(search, "search", "поиск", "hledat") \
  X(nothing_matches, "nothing matches", "ничего не найдено", "nic neodpovídá") \
  X(no_scenarios, "no scenarios found", "сценарии не найдены", "žádné scénáře") \
  X(topic_clients, "clients", "клиенты", "klienti") \
  X(topic_locks, "locks", "блокировки", "zámky") \
  X(topic_messaging, "messaging", "сообщения", "zprávy") \
  X(topic_transactions, "transactions", "транзакции", "transakce") \
  X(topic_scripts, "scripts", "скрипты", "skripty") \
  X(topic_atomicity, "atomicity", "атомарность", "atomicita") \
  X(topic_other, "other", "другое", "ostatní") \
  X(no_scenario_hint, "no scenario: pick one on the left", "нет сценария: выберите слева", "žádný scénář: vyberte vlevo") \
  /* ---- Timeline head ---- */ \
  X(nothing_yet, "nothing to show yet", "пока нечего показать", "zatím není co ukázat") \
  X(run_of, "run of {0}", "прогон {0}", "běh {0}") \
  X(live_run_of, "live run of {0} on {1}", "живой прогон {0} на {1}", "živý běh {0} na {1}") \
  X(seed_is, "seed {0}", "зерно {0}", "semínko {0}") \
  X(playhead_of, "playhead {0} of {1}", "курсор {0} из {1}", "ukazatel {0} z {1}") \
  X(running_dots, "(running ...)", "(идёт ...)", "(běží ...)") \
  /* ---- What-if interventions (whatif.cpp) ---- */ \
  X(wi_header, "What-if", "Что, если", "Co kdyby") \
  X(wi_none, "Right-click a lane at a moment to add an intervention there: the run is redone from the start with it.", "Щёлкните правой кнопкой по дорожке в нужный момент, чтобы добавить вмешательство: прогон будет пересчитан с начала.", "Klepněte pravým tlačítkem na dráhu v daném okamžiku a přidejte zásah: běh se přepočítá od začátku.") \
  X(wi_ghost_legend, "faint grey: the run without interventions", "бледно-серым: прогон без вмешательств", "bledě šedě: běh bez zásahů") \
  X(wi_fake_only, "What-if runs on the fake backend.", "«Что, если» работает на имитации.", "„Co kdyby“ běží na simulovaném backendu.") \
  X(wi_undo, "Undo", "Отменить", "Zpět") \
  X(wi_redo, "Redo", "Повторить", "Znovu") \
  X(wi_remove, "remove", "убрать", "odebrat") \
  X(wi_save, "Save branch", "Сохранить ветку", "Uložit větev") \
  X(wi_need_path, "type the branch file's path first", "сначала введите путь к файлу ветки", "nejdřív zadejte cestu k souboru větve") \
  X(wi_path_hint, "path/to/branch.json", "путь/к/ветке.json", "cesta/k/větvi.json") \
  X(wi_saved, "branch saved to {0}", "ветка сохранена в {0}", "větev uložena do {0}") \
  X(wi_opened, "branch {0}: {1}", "ветка {0}: {1}", "větev {0}: {1}") \
  X(wi_not_added, "the intervention was not applied: {0}", "вмешательство не применено: {0}", "zásah nebyl použit: {0}") \
  X(wi_menu_title, "{0} at {1}", "{0} в {1}", "{0} v {1}") \
  X(wi_add, "Add", "Добавить", "Přidat") \
  X(wi_cancel, "Cancel", "Отмена", "Zrušit") \
  X(wi_server, "server", "сервер", "server") \
  X(wi_k_pause, "pause it", "остановить процесс (пауза)", "pozastavit proces") \
  X(wi_k_crash, "crash it", "уронить процесс", "shodit proces") \
  X(wi_k_disconnect, "drop its connections", "разорвать его соединения", "přerušit jeho spojení") \
  X(wi_k_latency, "delay its replies", "задержать его ответы", "zpozdit jeho odpovědi") \
  X(wi_k_partition, "cut it off from a server", "отрезать от сервера", "odříznout od serveru") \
  X(wi_k_clock_jump, "jump its clock", "сдвинуть его часы", "posunout jeho hodiny") \
  X(wi_k_stall, "make it stall", "заморозить сервер", "zmrazit server") \
  X(wi_k_restart, "restart it", "перезапустить сервер", "restartovat server") \
  X(wi_f_at, "at (ms)", "в момент (мс)", "v čase (ms)") \
  X(wi_f_for, "for (ms)", "на (мс)", "na (ms)") \
  X(wi_f_by, "by (ms)", "сдвиг (мс)", "o (ms)") \
  X(wi_f_restart_after, "restart after (ms)", "перезапуск через (мс)", "restart po (ms)") \
  X(wi_w_pause, "{0}: pause {1} for {2}", "{0}: пауза {1} на {2}", "{0}: pauza {1} na {2}") \
  X(wi_w_crash, "{0}: crash {1}", "{0}: падение {1}", "{0}: pád {1}") \
  X(wi_w_crash_restart, "{0}: crash {1}, restarted after {2}", "{0}: падение {1}, перезапуск через {2}", "{0}: pád {1}, restart po {2}") \
  X(wi_w_disconnect, "{0}: drop the connections of {1}", "{0}: разрыв соединений {1}", "{0}: přerušení spojení {1}") \
  X(wi_w_latency, "{0}: replies to {1} delayed by {2} for {3}", "{0}: ответы {1} задержаны на {2} в течение {3}", "{0}: odpovědi pro {1} zpožděny o {2} po dobu {3}") \
  X(wi_w_latency_rest, "{0}: replies to {1} delayed by {2}", "{0}: ответы {1} задержаны на {2}", "{0}: odpovědi pro {1} zpožděny o {2}") \
  X(wi_w_partition, "{0}: {1} cut off from {2} for {3}", "{0}: {1} отрезан от {2} на {3}", "{0}: {1} odříznut od {2} na {3}") \
  X(wi_w_clock_jump, "{0}: the clock of {1} jumps by {2}", "{0}: часы {1} сдвигаются на {2}", "{0}: hodiny {1} se posunou o {2}") \
  X(wi_w_stall, "{0}: {1} stalls for {2}", "{0}: {1} замирает на {2}", "{0}: {1} se zastaví na {2}") \
  X(wi_w_restart, "{0}: restart {1}", "{0}: перезапуск {1}", "{0}: restart {1}") \
  X(wi_w_other, "{0}: {1}", "{0}: {1}", "{0}: {1}") \
  X(wi_ms, "{0} ms", "{0} мс", "{0} ms") \
  X(wi_caption, "what-if: {0} (the original in faint grey)", "что, если: {0} (исходный прогон бледно-серым)", "co kdyby: {0} (původní běh bledě šedě)") \
  X(wi_plural, "intervention|interventions", "вмешательство|вмешательства|вмешательств", "zásah|zásahy|zásahů") \
  /* ---- Verdicts ---- */ \
  X(word_violated, "VIOLATED", "НАРУШЕНО", "PORUŠENO") \
  X(word_holds, "holds", "выполнено", "platí") \
  X(word_so_far, "so far", "пока", "zatím") \
  X(word_not_judged, "n/a", "н/д", "n/a") \
  X(no_violation_yet, "no violation yet", "нарушений пока нет", "zatím bez porušení") \
  X(verdict_at, "at {0}: {1}", "в {0}: {1}", "v {0}: {1}") \
  X(go_to, "{0}: go to {1}", "{0}: перейти к {1}", "{0}: přejít na {1}") \
  X(unexpected_hold, "unexpected: this variant should hold", "неожиданно: в этом варианте проверка должна выполняться", "nečekané: v této variantě má kontrola platit") \
  X(unexpected_fail, "unexpected: this variant should fail", "неожиданно: в этом варианте проверка должна нарушаться", "nečekané: v této variantě má kontrola selhat") \
  X(more, "+{0} more:", "ещё {0}:", "dalších {0}:") \
  X(more_so_far, "+{0} more so far:", "пока ещё {0}:", "zatím dalších {0}:") \
  X(more_summary, "{0} (+{1} more)", "{0} (и ещё {1})", "{0} (a dalších {1})") \
  X(n_steps_all, "... (N steps through them all)", "... (N — перебрать все)", "... (N projde všechna)") \
  X(quiet_final, "no violation: {0}", "без нарушений: {0}", "bez porušení: {0}") \
  X(quiet_so_far, "so far no violation: {0}", "пока без нарушений: {0}", "zatím bez porušení: {0}") \
  X(expectation_met, "the run met the scenario's expectation", "прогон соответствует ожиданию сценария", "běh odpovídá očekávání scénáře") \
  X(expectation_not_met, "the run did NOT meet the scenario's expectation", "прогон НЕ соответствует ожиданию сценария", "běh NEODPOVÍDÁ očekávání scénáře") \
  X(so_far_note, "so far: up to the playhead; the verdicts are final at the end (V reveals)", "пока: до курсора; окончательные вердикты — в конце (V показывает всё)", "zatím: do ukazatele; konečné verdikty jsou na konci (V odhalí vše)") \
  X(not_judged_none, "not judged: the run gave this check nothing to judge", "не оценено: в прогоне не было ничего, что эта проверка оценивает", "nehodnoceno: běh nedal této kontrole nic k posouzení") \
  X(not_judged_backend, "not judged: it needs the server's own record, which only the fake backend keeps", "не оценено: нужна собственная запись сервера, а её ведёт только имитация", "nehodnoceno: potřebuje vlastní záznam serveru, který vede jen simulovaný backend") \
  /* ---- Presenter ---- */ \
  X(state_playing, "playing", "идёт", "hraje") \
  X(state_paused, "paused", "пауза", "pauza") \
  X(state_revealed, "revealed", "всё показано", "odhaleno") \
  X(state_stops, "stops at notes", "стоп на заметках", "zastavuje u poznámek") \
  X(keys_hint, "H: keys", "H: клавиши", "H: klávesy") \
  X(caption_hint, "Space plays; Right goes to the next note.", "Пробел — пуск; → — следующая заметка.", "Mezerník přehrává; → jde na další poznámku.") \
  /* ---- Keys ---- */ \
  X(key_space, "Space", "Пробел", "Mezerník") \
  X(key_space_does, "play / pause", "пуск / пауза", "přehrát / pauza") \
  X(key_right, "Right, Page Down", "→, Page Down", "→, Page Down") \
  X(key_right_does, "next narration note", "следующая заметка рассказа", "další poznámka vyprávění") \
  X(key_left, "Left, Page Up", "←, Page Up", "←, Page Up") \
  X(key_left_does, "previous narration note", "предыдущая заметка рассказа", "předchozí poznámka vyprávění") \
  X(key_up_down, "Up / Down", "↑ / ↓", "↑ / ↓") \
  X(key_up_down_does, "faster / slower", "быстрее / медленнее", "rychleji / pomaleji") \
  X(key_digits_does, "toggle the scenario's variants (the run is redone in place)", "переключить варианты сценария (прогон пересчитывается на месте)", "přepnout varianty scénáře (běh se přepočítá na místě)") \
  X(key_r_does, "restart from 0", "с начала", "od začátku") \
  X(key_v_does, "reveal everything: the future and the final verdicts", "показать всё: будущее и окончательные вердикты", "odhalit vše: budoucnost a konečné verdikty") \
  X(key_f_does, "show the future faint instead of hiding it", "показывать будущее бледным, а не скрывать", "ukazovat budoucnost bledě místo skrytí") \
  X(key_s_does, "stop at each narration note while playing (on / off)", "останавливаться на каждой заметке (вкл. / выкл.)", "zastavovat u každé poznámky (zap. / vyp.)") \
  X(key_n_does, "next / previous violation", "следующее / предыдущее нарушение", "další / předchozí porušení") \
  X(key_e_does, "next / previous event of the selected actor", "следующее / предыдущее событие выбранного актора", "další / předchozí událost vybraného aktéra") \
  X(key_p_does, "presenter mode on / off", "режим презентации вкл. / выкл.", "prezentační režim zap. / vyp.") \
  X(key_h_does, "this list", "этот список", "tento seznam") \
  X(key_esc_does, "close this list; leave presenter mode", "закрыть список; выйти из режима презентации", "zavřít seznam; opustit prezentační režim") \
  X(key_ctrl_does, "everything larger, smaller, back to normal (remembered)", "всё крупнее, мельче, обычный размер (запоминается)", "vše větší, menší, normální velikost (pamatuje si)") \
  X(key_undo_does, "undo, redo a what-if edit", "отменить, повторить правку «что, если»", "vrátit, zopakovat úpravu „co kdyby“") \
  /* ---- Inspector ---- */ \
  X(selected_event, "Selected event", "Выбранное событие", "Vybraná událost") \
  X(keyspace_header, "Keyspace at the playhead", "Ключи на момент курсора", "Klíče v okamžiku ukazatele") \
  X(pools_header, "Connection pools", "Пулы соединений", "Pooly spojení") \
  X(slowlog_header, "SLOWLOG at the playhead", "SLOWLOG на момент курсора", "SLOWLOG v okamžiku ukazatele") \
  X(slowlog_n, "{0}: {1} in SLOWLOG", "{0}: в SLOWLOG {1}", "{0}: v SLOWLOG {1}") \
  X(entries_plural, "entry|entries", "запись|записи|записей", "záznam|záznamy|záznamů") \
  X(slowlog_not_observed_why, "a real server: the trace holds what its clients saw, not its SLOWLOG", "настоящий сервер: в трассе то, что видели клиенты, а не его SLOWLOG", "skutečný server: záznam obsahuje, co viděli klienti, ne jeho SLOWLOG") \
  X(slowlog_entry, "#{0}  {1}  {2}", "#{0}  {1}  {2}", "#{0}  {1}  {2}") \
  X(slowlog_entry_tip, "{0}\nran {1}, logged at {2}, connection {3}", "{0}\nвыполнялась {1}, записана в {2}, соединение {3}", "{0}\nběžel {1}, zapsán v {2}, spojení {3}") \
  X(client_options, "Client options", "Настройки клиентов", "Nastavení klientů") \
  X(none_in_trace, "none in this trace", "в этой трассе нет", "v tomto záznamu nejsou") \
  X(click_an_event, "Click an event on the timeline.", "Щёлкните событие на временной шкале.", "Klikněte na událost na časové ose.") \
  X(violated_from_to, "{0} violated from {1} to {2}", "{0} нарушено с {1} до {2}", "{0} porušeno od {1} do {2}") \
  X(event_at, "{0}  at {1}", "{0}  в {1}", "{0}  v {1}") \
  X(actor_is, "actor: {0}", "актор: {0}", "aktér: {0}") \
  X(connection_n, "connection {0}", "соединение {0}", "spojení {0}") \
  X(connection_to, "connection {0} to {1}", "соединение {0} с {1}", "spojení {0} k {1}") \
  X(step_n, "step {0}", "шаг {0}", "krok {0}") \
  X(attempt_first, "attempt {0} (the first try)", "попытка {0} (первая)", "pokus {0} (první)") \
  X(attempt_retry, "attempt {0} (a retry)", "попытка {0} (повтор)", "pokus {0} (opakování)") \
  X(step_attempt, "step {0}, attempt {1}", "шаг {0}, попытка {1}", "krok {0}, pokus {1}") \
  X(begins_span, "begins span {0}", "начинает интервал {0}", "začíná úsek {0}") \
  X(ends_span, "ends span {0}", "завершает интервал {0}", "končí úsek {0}") \
  X(still_open_what, "{0}: still open", "{0}: ещё не закончено", "{0}: ještě neskončilo") \
  X(ended_after, "{0} after {1}", "{0} через {1}", "{0} po {1}") \
  X(not_observed, "{0}: not observed", "{0}: не наблюдается", "{0}: nesledováno") \
  X(failed_over_keys, "{0}: down from {1} on (its replica took over): its name leads to {2}", "{0}: не работает начиная с {1} (переключение на реплику): его имя ведёт к {2}", "{0}: od {1} mimo provoz (převzetí replikou): jeho jméno vede na {2}") \
  X(not_observed_why, "a real server: the trace holds what its clients saw, not its keys", "настоящий сервер: в трассе то, что видели клиенты, а не его ключи", "skutečný server: záznam obsahuje, co viděli klienti, ne jeho klíče") \
  X(n_keys, "{0}: {1}", "{0}: {1}", "{0}: {1}") \
  X(keys_plural, "key|keys", "ключ|ключа|ключей", "klíč|klíče|klíčů") \
  X(col_key, "key", "ключ", "klíč") \
  X(col_value, "value", "значение", "hodnota") \
  X(col_ttl, "TTL", "TTL", "TTL") \
  X(n_more_rows, "... {0} more", "... ещё {0}", "... dalších {0}") \
  X(ttl_tip, "{0} ms left (expires at {1} on the server's clock)", "осталось {0} мс (истекает в {1} по часам сервера)", "zbývá {0} ms (vyprší v {1} podle hodin serveru)") \
  X(no_ttl, "no TTL", "без TTL", "bez TTL") \
  X(ttl_unknown, "TTL unknown", "TTL неизвестен", "TTL neznámé") \
  X(expiring, "expiring", "истекает", "vyprší") \
  X(time_left, "{0} left", "ещё {0}", "zbývá {0}") \
  X(no_pool_stats, "no pool statistics in this trace", "в этой трассе нет статистики пулов", "v tomto záznamu nejsou statistiky poolů") \
  X(in_use_peak, "{0}: connections in use (peak {1})", "{0}: занятые соединения (максимум {1})", "{0}: použitá spojení (nejvýš {1})") \
  X(in_use_peak_so_far, "{0}: connections in use (peak {1} so far)", "{0}: занятые соединения (пока максимум {1})", "{0}: použitá spojení (zatím nejvýš {1})") \
  X(in_use_now, "in use {0}/{1}", "занято {0}/{1}", "použito {0}/{1}") \
  X(pool_counts, "hits {0}  misses {1}  timeouts {2}", "попаданий {0}  промахов {1}  тайм-аутов {2}", "zásahů {0}  minutí {1}  vypršení {2}") \
  X(no_connections_yet, "no connections yet", "соединений пока нет", "zatím žádná spojení") \
  X(no_servers, "no servers in this trace", "в этой трассе нет серверов", "v tomto záznamu nejsou servery") \
  X(notes_hint, "Notes appear here as the playhead reaches them.", "Заметки появляются здесь, когда до них доходит курсор.", "Poznámky se objeví zde, jakmile k nim dojde ukazatel.") \
  /* ---- Status and errors of the GUI itself ---- */ \
  X(replaying, "replaying {0} ({1})", "воспроизведение {0} ({1})", "přehrávání {0} ({1})") \
  X(wrote, "wrote {0}", "записано: {0}", "zapsáno: {0}") \
  X(saved_trace_to, "saved the trace to {0}", "трасса сохранена в {0}", "záznam uložen do {0}") \
  X(wrote_chrome, "wrote {0} (open it in ui.perfetto.dev)", "записано: {0} (откройте в ui.perfetto.dev)", "zapsáno: {0} (otevřete v ui.perfetto.dev)") \
  X(nothing_to_save, "nothing to save yet: run a scenario first", "пока нечего сохранять: сначала запустите сценарий", "zatím není co uložit: nejdřív spusťte scénář") \
  X(nothing_to_export, "nothing to export yet: run a scenario first", "пока нечего экспортировать: сначала запустите сценарий", "zatím není co exportovat: nejdřív spusťte scénář") \
  X(running_on, "running {0} on {1} ...", "идёт {0} на {1} ...", "běží {0} na {1} ...") \
  X(run_finished, "the run on {0} finished", "прогон на {0} закончен", "běh na {0} skončil") \
  X(for_next_run, "{0} (for the next run)", "{0} (для следующего прогона)", "{0} (pro příští běh)") \
  X(select_actor_event, "select an event of an actor first (click one on the timeline)", "сначала выберите событие актора (щёлкните на временной шкале)", "nejdřív vyberte událost aktéra (klikněte na časové ose)") \
  X(open_scenario_first, "open a scenario first (the library on the left)", "сначала откройте сценарий (список слева)", "nejdřív otevřete scénář (seznam vlevo)") \
  X(previous_run_finishing, "the previous run is still finishing (deleting its keys, stopping its servers); run again in a moment", "предыдущий прогон ещё завершается (удаляет свои ключи, останавливает серверы); запустите чуть позже", "předchozí běh ještě končí (maže své klíče, zastavuje servery); spusťte za chvíli") \
  X(no_such_scenario, "no scenario \"{0}\" in {1}", "нет сценария «{0}» в {1}", "scénář „{0}“ v {1} není") \
  X(current_kept, "{0} (the current one is kept)", "{0} (текущий остаётся)", "{0} (současný zůstává)") \
  X(not_a_trace, "{0}: not a redlab trace this build can read: {1}", "{0}: это не трасса redlab, которую может прочитать эта сборка: {1}", "{0}: toto není záznam redlab, který tato verze umí přečíst: {1}") \
  /* ---- The timeline ---- */ \
  X(what_next, "what happens next?  (V reveals)", "что будет дальше?  (V покажет)", "co bude dál?  (V odhalí)") \
  X(paused_word, "paused", "пауза", "pauza") \
  X(pool_wait_label, "pool wait", "ждёт пул", "čeká na pool") \
  X(disconnected_label, "disconnected", "отключён", "odpojen") \
  X(work_label, "work {0}", "работа {0}", "práce {0}") \
  X(sleep_label, "sleep {0}", "сон {0}", "spánek {0}") \
  X(holds_label, "holds {0}", "держит {0}", "drží {0}") \
  X(key_of_label, "key of {0}", "токен {0}", "token {0}") \
  X(fence_label, "fence {0}", "токен {0}", "token {0}") \
  X(cut_output_buffer, "output buffer full", "выходной буфер переполнен", "výstupní buffer přetekl") \
  X(recovered_label, "recovered", "исправлено", "zotaveno") \
  X(restart_label, "restarted: keys and scripts lost", "перезапуск: ключи и скрипты потеряны", "restart: klíče a skripty ztraceny") \
  X(cut_label, "cut {0}: {1}", "отключил {0}: {1}", "odpojil {0}: {1}") \
  X(cut_label_nobody, "cut a client: {0}", "отключил клиента: {0}", "odpojil klienta: {0}") \
  X(row_steps, "steps", "шаги", "kroky") \
  X(row_events, "events", "события", "události") \
  X(row_served, "served", "обслужено", "obslouženo") \
  X(row_in_flight, "in flight", "в пути", "na cestě") \
  X(row_conn, "conn", "соед.", "spoj.") \
  X(row_other_keys, "other keys", "другие ключи", "další klíče") \
  X(seen_by_clients, "as seen by clients", "как видели клиенты", "jak to viděli klienti") \
  X(group_label, "{0} ×{1}", "{0} ×{1}", "{0} ×{1}") \
  X(collapse_tip, "Click: fold / unfold the lane. Wheel over the names: scroll.", "Щелчок — свернуть / развернуть дорожку. Колесо над именами — прокрутка.", "Klik: sbalit / rozbalit dráhu. Kolečko nad jmény: posun.") \
  X(group_tip, "{0}: click to fold / unfold the group", "{0}: щелчок — свернуть / развернуть группу", "{0}: klik sbalí / rozbalí skupinu") \
  X(folded_tip, "{0} items between {1} and {2}\nzoom in to see them", "{0} элементов между {1} и {2}\nприблизьте, чтобы увидеть", "{0} položek mezi {1} a {2}\npřibližte, abyste je viděli") \
  X(took, "took {0}", "заняло {0}", "trvalo {0}") \
  X(busy_for, "busy for {0}", "занят {0}", "zaneprázdněn {0}") \
  X(still_open, "still open", "ещё не закончено", "ještě neskončilo") \
  X(ttl_reaches_zero, "TTL {0}, reaches 0 at {1} (the server's clock)", "TTL {0}, доходит до 0 в {1} (по часам сервера)", "TTL {0}, dosáhne 0 v {1} (podle hodin serveru)") \
  X(set_by, "set by {0}", "установил {0}", "nastavil {0}") \
  X(hold_counts_until, "TTL {0}, the holder counts on it until {1}", "TTL {0}, владелец рассчитывает на него до {1}", "TTL {0}, držitel s ním počítá do {1}") \
  X(held_past_ttl, "held {0} past the TTL: the key was no longer its own", "держал {0} после истечения TTL: ключ уже не его", "držel {0} po vypršení TTL: klíč už nebyl jeho") \
  X(deleted_by_other, "deleted by someone who did not hold it", "удалён тем, кто его не держал", "smazán někým, kdo ho nedržel") \
  X(message_lost_tip, "message lost: {0} published {1} at {2}", "сообщение потеряно: {0} опубликовал {1} в {2}", "zpráva ztracena: {0} publikoval {1} v {2}") \
  X(subscriber_gone, "the subscriber was not connected (or its buffer was dropped)", "подписчик не был подключён (или его буфер выброшен)", "odběratel nebyl připojen (nebo byl jeho buffer zahozen)") \
  X(recovered_tip, "an error the client recovered from: {0}", "ошибка, после которой клиент справился: {0}", "chyba, ze které se klient zotavil: {0}") \
  X(recovered_retry, "the call was retried and succeeded", "вызов повторён и удался", "volání se zopakovalo a uspělo") \
  X(recovered_fallback, "Script.Run fell back from EVALSHA to EVAL", "Script.Run перешёл с EVALSHA на EVAL", "Script.Run přešel z EVALSHA na EVAL") \
  X(check_violated, "{0} violated", "{0}: нарушение", "{0}: porušení") \
  X(from_to, "from {0} to {1}", "с {0} до {1}", "od {0} do {1}") \
  X(from_only, "from {0}", "с {0}", "od {0}") \
  X(stale_accept_tip, "accepted although a newer fence had been seen", "принято, хотя уже был более новый токен", "přijato, ačkoli už byl vidět novější token") \
  /* ---- Item kinds (tooltips) ---- */ \
  X(kind_command, "command", "команда", "příkaz") \
  X(kind_pool_wait, "pool wait", "ожидание пула", "čekání na pool") \
  X(kind_work, "work", "работа", "práce") \
  X(kind_sleep, "sleep", "сон", "spánek") \
  X(kind_pause, "pause", "пауза", "pauza") \
  X(kind_hold, "lock held", "блокировка у владельца", "držený zámek") \
  X(kind_ttl, "key TTL", "TTL ключа", "TTL klíče") \
  X(kind_served, "served", "обслуживание", "obsluha") \
  X(kind_gap, "disconnected", "отключение", "odpojení") \
  X(kind_error, "error", "ошибка", "chyba") \
  X(kind_accept, "write accepted", "запись принята", "zápis přijat") \
  X(kind_reject, "write rejected", "запись отклонена", "zápis odmítnut") \
  X(kind_lost, "message lost", "сообщение потеряно", "zpráva ztracena") \
  X(kind_expired, "key expired", "ключ истёк", "klíč vypršel") \
  X(kind_fault, "fault", "сбой", "porucha") \
  X(kind_restart, "server restart", "перезапуск сервера", "restart serveru") \
  X(kind_cut, "client cut by the server", "сервер отключил клиента", "server odpojil klienta") \
  /* ---- The legend ---- */ \
  X(legend_command, "command", "команда", "příkaz") \
  X(legend_error_reply, "error reply", "ответ-ошибка", "chybová odpověď") \
  X(legend_recovered, "recovered error", "исправленная ошибка", "zotavená chyba") \
  X(legend_pool_wait, "pool wait", "ожидание пула", "čekání na pool") \
  X(legend_work, "work", "работа", "práce") \
  X(legend_sleep, "sleep", "сон", "spánek") \
  X(legend_hold, "lock held / key TTL", "блокировка / TTL ключа", "zámek / TTL klíče") \
  X(legend_served, "served", "обслуживание", "obsluha") \
  X(legend_pause, "pause", "пауза", "pauza") \
  X(legend_gap, "disconnected", "отключение", "odpojení") \
  X(legend_message, "message", "сообщение", "zpráva") \
  X(legend_error, "error", "ошибка", "chyba") \
  X(legend_accept, "accepted", "принято", "přijato") \
  X(legend_stale, "stale accepted", "принято устаревшее", "přijat zastaralý") \
  X(legend_reject, "rejected", "отклонено", "odmítnuto") \
  X(legend_lost, "lost", "потеряно", "ztraceno") \
  X(legend_expired, "expired", "истёк", "vypršel") \
  X(legend_fault, "fault", "сбой", "porucha") \
  X(legend_restart, "restart", "перезапуск", "restart") \
  X(legend_cut, "client cut", "отключение клиента", "odpojení klienta") \
  X(legend_folded, "folded", "свёрнуто", "sbaleno") \
  X(legend_violation, "violation", "нарушение", "porušení") \
  X(legend_busy, "server busy", "сервер занят", "server zaneprázdněn") \
  /* ---- The checks' titles (a screen in English names them as the scenario does) ---- */ \
  X(check_mutual_exclusion, "one holder at a time", "один владелец за раз", "jeden držitel najednou") \
  X(check_no_foreign_unlock, "no one deletes another's lock", "никто не снимает чужую блокировку", "nikdo nemaže cizí zámek") \
  X(check_release_removes_own_lock, "a release removes its own lock", "снятие удаляет свою блокировку", "uvolnění maže vlastní zámek") \
  X(check_acquire_took_lock, "an acquisition really takes the lock", "захват действительно берёт блокировку", "získání opravdu vezme zámek") \
  X(check_script_keys_declared, "scripts name their keys", "скрипты называют свои ключи", "skripty jmenují své klíče") \
  X(check_no_stale_write, "no stale write accepted", "устаревшая запись не принимается", "zastaralý zápis se nepřijme") \
  X(check_no_forged_fence, "no forged fence accepted", "поддельный токен не принимается", "podvržený token se nepřijme") \
  X(check_no_lost_messages, "no message lost", "ни одно сообщение не потеряно", "žádná zpráva se neztratí") \
  X(check_no_pool_timeouts, "no pool timeouts", "без тайм-аутов пула", "bez vypršení poolu") \
  X(check_no_read_timeouts, "no read timeouts", "без тайм-аутов чтения", "bez vypršení čtení") \
  X(check_no_oversell, "no overselling", "без продаж сверх запаса", "nic se neprodá navíc") \
  X(check_stock_matches_sales, "the stock matches the sales", "запас сходится с продажами", "zásoba sedí s prodeji") \
  X(check_all_sold, "everything sold", "продано всё", "vše prodáno") \
  X(check_retries_bounded, "retries are bounded", "повторы ограничены", "opakování jsou omezená") \
  X(check_answered_within, "requests answered in time", "запросы получают ответ вовремя", "požadavky dostanou odpověď včas") \
  X(check_batch_not_interleaved, "nothing runs inside a batch", "в пакет не вклиниваются чужие команды", "do dávky se nevklíní cizí příkazy") \
  X(check_batch_round_trips, "few round trips per batch", "мало обменов с сервером на пакет", "málo výměn se serverem na dávku") \
  X(check_dials_within, "few new connections", "мало новых соединений", "málo nových spojení") \
  X(check_no_error_replies, "no error replies", "без ответов-ошибок", "bez chybových odpovědí") \
  X(check_no_unseen_overwrite, "no overwrite of an unread change", "никто не затирает непрочитанное изменение", "nikdo nepřepíše nepřečtenou změnu") \
  X(check_rate_within_limit, "the rate stays within the limit", "частота в пределах лимита", "četnost v mezích limitu") \
  X(check_all_recorded, "every step succeeded", "все шаги удались", "všechny kroky se povedly") \
  X(check_writes_together, "the keys change together", "ключи меняются вместе", "klíče se mění společně") \
  X(check_processed_once, "each entry processed once", "каждая запись обработана ровно один раз", "každý záznam zpracován právě jednou") \
  X(check_key_final, "the key's final value", "итоговое значение ключа", "konečná hodnota klíče") \
  X(check_no_wait_behind, "no long wait behind others", "никто не ждёт долго за чужими командами", "nikdo nečeká dlouho za cizími příkazy") \
  /* ---- The checks' verdicts in words (verdict_words.cpp) ---- */ \
  X(v_ongoing, "{0} (since {1}, not over yet)", "{0} (с {1}, ещё не закончилось)", "{0} (od {1}, ještě neskončilo)") \
  X(and_word, "and", "и", "a") \
  X(v_mutex, "{0} and {1} held {2} together from {3} to {4}", "{0} и {1} держали {2} одновременно с {3} до {4}", "{0} a {1} drželi {2} současně od {3} do {4}") \
  X(v_mutex_label, "{0} and {1} both hold {2}", "{0} и {1} оба держат {2}", "{0} i {1} drží {2}") \
  X(v_mutex_ok, "never two holders at once", "никогда не было двух владельцев сразу", "nikdy dva držitelé najednou") \
  X(v_foreign, "{0}'s {1} at {2} removed {3}, which {4} had held since {5}", "{1} актора {0} в {2} удалил {3}, хотя с {5} блокировку держал {4}", "{1} aktéra {0} v {2} smazal {3}, ačkoli zámek od {5} držel {4}") \
  X(v_foreign_unknown, "{0}'s {1} at {2} removed {3}, which held a token {0} never had", "{1} актора {0} в {2} удалил {3} с чужим токеном, которого у {0} не было", "{1} aktéra {0} v {2} smazal {3} s cizím tokenem, který {0} nikdy neměl") \
  X(v_foreign_clients, "{0}'s release at {1} removed {2}, which {3} had held since {4} (as seen by clients)", "снятие актором {0} в {1} удалило {2}, хотя с {4} её держал {3} (как видели клиенты)", "uvolnění aktérem {0} v {1} smazalo {2}, ačkoli ho od {4} držel {3} (jak to viděli klienti)") \
  X(how_script, "release script", "скрипт снятия", "skript uvolnění") \
  X(how_tx, "transaction", "транзакция", "transakce") \
  X(how_command, "command", "команда", "příkaz") \
  X(v_foreign_label, "{0} deleted {1}'s lock", "{0} удалил блокировку {1}", "{0} smazal zámek {1}") \
  X(v_foreign_label_unknown, "{0} deleted a lock not its own", "{0} удалил чужую блокировку", "{0} smazal cizí zámek") \
  X(v_foreign_ok, "every deletion of the lock removed its deleter's own token", "каждое удаление блокировки снимало токен того, кто удалял", "každé smazání zámku odstranilo token toho, kdo mazal") \
  X(v_release_never, "{0}'s release of {1} at {2} never finished (still waiting at the end of the run: a script that does not end?)", "снятие {1} актором {0} в {2} так и не закончилось (к концу прогона всё ещё ждёт: скрипт, который не завершается?)", "uvolnění {1} aktérem {0} v {2} nikdy neskončilo (na konci běhu pořád čeká: skript, který nekončí?)") \
  X(v_release_failed, "{0}'s release at {1} failed ({2}) and left {3} in place, still holding {0}'s own token", "снятие актором {0} в {1} не удалось ({2}) и оставило {3} на месте, с токеном самого {0}", "uvolnění aktérem {0} v {1} selhalo ({2}) a nechalo {3} na místě, s vlastním tokenem {0}") \
  X(v_release_wrong, "{0}'s release at {1} returned {2}, which is not what the server did", "снятие актором {0} в {1} вернуло {2}, но сервер сделал иное", "uvolnění aktérem {0} v {1} vrátilo {2}, ale server udělal něco jiného") \
  X(v_release_label, "release of {0} went wrong", "снятие {0} не сработало", "uvolnění {0} se nepovedlo") \
  X(v_release_ok, "every release removed the releaser's own lock and said so", "каждое снятие удаляло свою блокировку и сообщало об этом", "každé uvolnění smazalo vlastní zámek a řeklo to") \
  X(v_acquire, "{0} believed it acquired {1} at {2}, but the server never set the key to its token ({3})", "{0} считал, что взял {1} в {2}, но сервер так и не записал в ключ его токен ({3})", "{0} věřil, že získal {1} v {2}, ale server klíči jeho token nikdy nenastavil ({3})") \
  X(acquire_no_key, "the key did not exist", "ключа не было", "klíč neexistoval") \
  X(acquire_token_of, "it held {0}'s token", "в нём был токен {0}", "obsahoval token {0}") \
  X(acquire_value, "it held \"{0}\"", "в нём было «{0}»", "obsahoval „{0}“") \
  X(v_acquire_label, "{0}'s lock was never set", "блокировка {0} не была записана", "zámek {0} nebyl nastaven") \
  X(v_acquire_ok, "every acquisition set the lock key to its holder's token", "каждый захват записывал в ключ токен владельца", "každé získání nastavilo klíči token držitele") \
  X(v_script_keys, "{0}'s script ({1}) at {2} {3} {4}, a key it was not given in KEYS (scripts must name every key they touch)", "скрипт {0} ({1}) в {2} {3} {4} — ключ, не переданный в KEYS (скрипт должен называть каждый ключ, который трогает)", "skript {0} ({1}) v {2} {3} {4}, klíč, který nedostal v KEYS (skript musí jmenovat každý klíč, na který sahá)") \
  X(script_wrote, "wrote", "записал", "zapsal") \
  X(script_deleted, "deleted", "удалил", "smazal") \
  X(v_script_keys_label, "script touched {0} outside KEYS", "скрипт изменил {0} вне KEYS", "skript změnil {0} mimo KEYS") \
  X(v_script_keys_ok, "every script touched only the keys it was given", "каждый скрипт трогал только переданные ему ключи", "každý skript měnil jen klíče, které dostal") \
  X(v_stale, "{0} accepted {1}'s write with fence {2} at {3} after it had seen fence {4}", "{0} принял запись {1} с токеном {2} в {3}, хотя уже видел токен {4}", "{0} přijal zápis {1} s tokenem {2} v {3}, ačkoli už viděl token {4}") \
  X(v_stale_same, "{0} accepted {1}'s write with fence {2} at {3} with the same fence as {4}'s earlier write: two holders had one fence", "{0} принял запись {1} с токеном {2} в {3} — с тем же токеном, что и более ранняя запись {4}: у двух владельцев один токен", "{0} přijal zápis {1} s tokenem {2} v {3} se stejným tokenem jako dřívější zápis {4}: dva držitelé měli jeden token") \
  X(v_stale_label, "stale write accepted: fence {0} < {1}", "принята устаревшая запись: токен {0} < {1}", "přijat zastaralý zápis: token {0} < {1}") \
  X(v_stale_same_label, "fence {0} accepted twice", "токен {0} принят дважды", "token {0} přijat dvakrát") \
  X(v_stale_ok, "no write with an old fence was accepted", "ни одна запись со старым токеном не принята", "žádný zápis se starým tokenem nebyl přijat") \
  X(v_forged, "{0} accepted {1}'s fence {2} at {3}, a fence no lock ever handed out", "{0} принял токен {2} от {1} в {3}, а такой токен не выдавала ни одна блокировка", "{0} přijal token {2} od {1} v {3}, který žádný zámek nikdy nevydal") \
  X(v_forged_then, "{0}; it then rejected {1} by {2}", "{0}; затем он отклонил {1}: {2}", "{0}; pak odmítl {1}: {2}") \
  X(genuine_writes, "genuine write|genuine writes", "настоящую запись|настоящие записи|настоящих записей", "pravý zápis|pravé zápisy|pravých zápisů") \
  X(v_forged_label, "forged fence {0} accepted", "принят поддельный токен {0}", "přijat podvržený token {0}") \
  X(v_forged_ok, "every accepted fence came from the lock", "каждый принятый токен выдан блокировкой", "každý přijatý token pochází ze zámku") \
  X(v_lost, "{0} missed {1} on {2}, published from {3} to {4}: {5}", "{0} пропустил {1} в канале {2}, опубликованных с {3} до {4}: {5}", "{0} zmeškal {1} v kanálu {2}, publikovaných od {3} do {4}: {5}") \
  X(messages, "message|messages", "сообщение|сообщения|сообщений", "zprávu|zprávy|zpráv") \
  X(v_lost_zero, "{0} (PUBLISH returned 0 for {1} of them: nobody was subscribed)", "{0} (PUBLISH вернул 0 для {1} из них: никто не был подписан)", "{0} (PUBLISH vrátil 0 pro {1} z nich: nikdo nebyl přihlášen)") \
  X(v_lost_counted, "{0} (PUBLISH counted a receiver for {1} of them: queued for the subscriber, never processed)", "{0} (PUBLISH насчитал получателя для {1} из них: в очереди подписчика, но так и не обработаны)", "{0} (PUBLISH započítal příjemce u {1} z nich: ve frontě odběratele, ale nikdy nezpracovány)") \
  X(v_lost_label, "{0} lost", "потеряно: {0}", "ztraceno: {0}") \
  X(v_lost_zero_label, "PUBLISH reached 0 subscribers: {0} lost", "PUBLISH дошёл до 0 подписчиков: потеряно {0}", "PUBLISH dorazil k 0 odběratelům: ztraceno {0}") \
  X(v_lost_ok, "every message arrived", "все сообщения дошли", "všechny zprávy dorazily") \
  X(group_word, "group {0}", "группа {0}", "skupina {0}") \
  X(v_pool, "{0} hit {1} (the first at {2})", "у {0} {1} (первый в {2})", "{0}: {1} (první v {2})") \
  X(pool_timeouts, "pool timeout|pool timeouts", "тайм-аут пула|тайм-аута пула|тайм-аутов пула", "vypršení poolu|vypršení poolu|vypršení poolu") \
  X(read_timeouts, "read timeout|read timeouts", "тайм-аут чтения|тайм-аута чтения|тайм-аутов чтения", "vypršení čtení|vypršení čtení|vypršení čtení") \
  X(v_pool_label_one, "pool timeout after {0}", "тайм-аут пула через {0}", "vypršení poolu po {0}") \
  X(v_read_label_one, "read timeout after {0}", "тайм-аут чтения через {0}", "vypršení čtení po {0}") \
  X(v_pool_waiting, "{0} was still waiting for a pooled connection at the end of the run (since {1})", "{0} к концу прогона всё ещё ждал соединения из пула (с {1})", "{0} na konci běhu pořád čekal na spojení z poolu (od {1})") \
  X(v_pool_waiting_label, "still waiting for a connection", "всё ещё ждёт соединения", "pořád čeká na spojení") \
  X(v_pool_ok, "no call waited in vain for a pooled connection", "ни один вызов не ждал соединения из пула впустую", "žádné volání nečekalo na spojení z poolu marně") \
  X(v_read_ok, "every reply came within its read timeout", "каждый ответ пришёл в пределах тайм-аута чтения", "každá odpověď přišla v rámci limitu čtení") \
  X(v_oversell, "{0} sold from a stock of {1}: {2} oversold, the first at {3}", "продано {0} при запасе {1}: {2} сверх запаса, первая в {3}", "prodáno {0} ze zásoby {1}: {2} navíc, první v {3}") \
  X(v_oversell_label, "{0} oversold", "продано сверх запаса: {0}", "prodáno navíc: {0}") \
  X(v_oversell_ok, "never more sold than the stock", "продано не больше запаса", "nikdy neprodáno víc, než je zásoba") \
  X(v_stock_negative, "{0} went below 0 at {1} (down to {2}): more was taken than there was", "{0} ушёл ниже 0 в {1} (до {2}): взяли больше, чем было", "{0} klesl pod 0 v {1} (až na {2}): vzalo se víc, než bylo") \
  X(v_stock_negative_label, "{0} below 0", "{0} ниже 0", "{0} pod 0") \
  X(v_stock_went_label, "{0}: {1} taken, {2} sold", "{0}: взято {1}, продано {2}", "{0}: vzato {1}, prodáno {2}") \
  X(v_stock_mismatch, "{0} does not match the sales recorded", "{0} не сходится с записанными продажами", "{0} nesedí se zaznamenanými prodeji") \
  X(v_stock_went, "{0} went from {1} to {2} ({3} taken), but {4} were recorded as sold", "{0}: было {1}, стало {2} (взято {3}), но записано продаж: {4}", "{0}: bylo {1}, je {2} (vzato {3}), ale zaznamenaných prodejů: {4}") \
  X(v_stock_ok, "the stock went down by exactly the sales, never below 0", "запас уменьшился ровно на продажи и не уходил ниже 0", "zásoba klesla přesně o prodeje a nikdy pod 0") \
  X(v_all_sold, "only {0} of {1} items were sold: the rest stayed in stock", "продано только {0} из {1}: остальное осталось на складе", "prodáno jen {0} z {1}: zbytek zůstal na skladě") \
  X(v_all_sold_label, "only {0} of {1} sold", "продано лишь {0} из {1}", "prodáno jen {0} z {1}") \
  X(v_all_sold_ok, "all items were sold", "продано всё", "vše prodáno") \
  X(v_retries, "{0} took {1} (bound {2})", "{0}: {1} (предел {2})", "{0}: {1} (mez {2})") \
  X(attempts, "attempt|attempts", "попытка|попытки|попыток", "pokus|pokusy|pokusů") \
  X(events_plural, "event|events", "событие|события|событий", "událost|události|událostí") \
  X(v_retries_label, "attempt {0}, bound {1}", "попытка {0} при пределе {1}", "pokus {0}, mez {1}") \
  X(v_retries_totals, "{0}; {1} attempts by {2} transactions, {3} EXECs aborted", "{0}; {1} попыток в {2} транзакциях, {3} EXEC прервано", "{0}; {1} pokusů v {2} transakcích, {3} EXEC přerušeno") \
  X(v_retries_ok, "no WATCH transaction retried past its bound", "ни одна транзакция WATCH не превысила предел попыток", "žádná transakce WATCH nepřekročila mez pokusů") \
  X(a_client, "a client", "клиент", "klient") \
  X(v_answered_late, "{0} answered {1} after its request began at {2}, over the bound of {3}", "{0} ответил через {1} после начала запроса в {2} — дольше предела {3}", "{0} odpověděl {1} po začátku požadavku v {2}, déle než mez {3}") \
  X(v_answered_gave_up, "{0} gave up without an answer at {1} (its request began at {2})", "{0} сдался без ответа в {1} (запрос начался в {2})", "{0} to vzdal bez odpovědi v {1} (požadavek začal v {2})") \
  X(v_answered_never, "{0} had not answered by the end of the run (its request began at {1}, bound {2})", "{0} так и не ответил к концу прогона (запрос начался в {1}, предел {2})", "{0} do konce běhu neodpověděl (požadavek začal v {1}, mez {2})") \
  X(v_answered_longest, "{0}; its longest wait was {1}, {2}", "{0}; дольше всего он ждал {1}: {2}", "{0}; nejdéle čekal na {1}: {2}") \
  X(v_answered_longest_error, "{0}; its longest wait was {1}, {2}, ending in: {3}", "{0}; дольше всего он ждал {1}: {2}, и вызов закончился так: {3}", "{0}; nejdéle čekal na {1}: {2}, a volání skončilo takto: {3}") \
  X(v_answered_label, "{0} answered late", "{0} ответил поздно", "{0} odpověděl pozdě") \
  X(v_answered_never_label, "{0} never answered", "{0} не ответил", "{0} neodpověděl") \
  X(v_answered_ok, "every request was answered within its bound", "каждый запрос получил ответ в пределах срока", "každý požadavek dostal odpověď v časové mezi") \
  X(v_interleaved, "{0}'s {1} at {2} ran between {3}'s {4} and {5}", "{1} от {0} в {2} выполнилась между {4} и {5} от {3}", "{1} od {0} v {2} proběhl mezi {4} a {5} od {3}") \
  X(v_interleaved_more, "{0}, and {1} more", "{0}, и ещё {1}", "{0} a další {1}") \
  X(commands_plural, "command|commands", "команда|команды|команд", "příkaz|příkazy|příkazů") \
  X(v_interleaved_label, "{0} ran inside {1}'s batch", "{0} вклинился в пакет {1}", "{0} se vklínil do dávky {1}") \
  X(v_interleaved_ok, "no other client's command ran inside a batch", "внутри пакета не выполнилась ни одна команда другого клиента", "uvnitř dávky neproběhl žádný příkaz jiného klienta") \
  X(v_round_trips, "{0}'s batch ({1}) at {2} waited for {3} ({4}), bound {5}", "пакет {0} ({1}) в {2} ждал {3} ({4}), предел {5}", "dávka od {0} ({1}) v {2} čekala na {3} ({4}), mez {5}") \
  X(round_trips_plural, "round trip|round trips", "обмен с сервером|обмена с сервером|обменов с сервером", "výměnu se serverem|výměny se serverem|výměn se serverem") \
  X(v_round_trips_label, "{0} round trips, bound {1}", "обменов с сервером: {0}, предел {1}", "výměn se serverem: {0}, mez {1}") \
  X(v_round_trips_ok, "no batch waited for more round trips than its bound", "ни один пакет не ждал больше обменов с сервером, чем позволено", "žádná dávka nečekala na víc výměn se serverem, než je mez") \
  X(v_dials, "{0} from {1} to {2}, above the bound of {3} (the first past it at {4})", "{0} с {1} до {2} — больше предела {3} (первое сверх предела в {4})", "{0} od {1} do {2}, víc než mez {3} (první nad mez v {4})") \
  X(v_dials_closed, "{0}; meanwhile the clients closed {1}", "{0}; тем временем клиенты закрыли {1}", "{0}; mezitím klienti zavřeli {1}") \
  X(new_conns, "new connection|new connections", "новое соединение|новых соединения|новых соединений", "nové spojení|nová spojení|nových spojení") \
  X(closed_conns, "closed connection|closed connections", "закрытое соединение|закрытых соединения|закрытых соединений", "zavřené spojení|zavřená spojení|zavřených spojení") \
  X(conns_plural, "connection|connections", "соединение|соединения|соединений", "spojení|spojení|spojení") \
  X(v_dials_label, "{0}, bound {1}", "{0} при пределе {1}", "{0} při mezi {1}") \
  X(v_dials_ok, "the clients dialled no more connections than the bound", "клиенты открыли не больше соединений, чем позволено", "klienti neotevřeli víc spojení, než je mez") \
  X(v_closes_ok, "the clients closed no more connections than the bound", "клиенты закрыли не больше соединений, чем позволено", "klienti nezavřeli víc spojení, než je mez") \
  X(v_errors, "{0}: {1} failed with {2} (the first at {3})", "{0}: {1} с ошибкой {2} (первый в {3})", "{0}: chyba {2} u {1} (první v {3})") \
  X(calls_plural, "call|calls", "вызов|вызова|вызовов", "volání|volání|volání") \
  X(v_errors_label, "{1} failed with {0}", "{1}: ошибка {0}", "{1}: chyba {0}") \
  X(v_errors_ok, "no call got this error back from the server", "ни один вызов не получил от сервера эту ошибку", "žádné volání nedostalo od serveru tuto chybu") \
  X(v_overwrite, "{0}'s {1} at {2} wrote {3} over {4}'s change at {5}, which {0} had not read ({6}): {4}'s update is lost", "{0} в {2} записал {3} ({1}) поверх изменения от {4} в {5}, которого не читал ({6}): обновление от {4} потеряно", "{0} v {2} zapsal {3} ({1}) přes změnu od {4} v {5}, kterou nečetl ({6}): aktualizace od {4} je ztracena") \
  X(overwrite_last_read, "its last read was at {0}", "последний раз он читал в {0}", "naposledy četl v {0}") \
  X(overwrite_never_read, "it never read the key", "ключ он не читал вовсе", "klíč vůbec nečetl") \
  X(v_overwrite_label, "{0} overwrote {1}'s change", "{0} затёр изменение от {1}", "{0} přepsal změnu od {1}") \
  X(v_overwrite_ok, "every write came after its writer read the latest change", "каждая запись шла после того, как пишущий прочитал последнее изменение", "každý zápis přišel až poté, co zapisující přečetl poslední změnu") \
  X(v_rate, "{0} requests let through from {1} to {2}, within one window of {3}: the limit is {4}", "с {1} до {2} пропущено запросов: {0} — в одном окне {3}, а лимит {4}", "od {1} do {2} propuštěno požadavků: {0}, v jednom okně {3}, a limit je {4}") \
  X(v_rate_few, "only {0} requests let through in all: a limit of {1} per {2} should have let through at least {3}", "всего пропущено запросов: {0}, а при лимите {1} за {2} должно было пройти не меньше {3}", "celkem propuštěno požadavků: {0}, ale při limitu {1} za {2} mělo projít aspoň {3}") \
  X(v_as_seen_by_clients, "{0} (as seen by clients)", "{0} (как видели клиенты)", "{0} (jak to viděli klienti)") \
  X(v_rate_label, "{0} in one window, limit {1}", "{0} в одном окне при лимите {1}", "{0} v jednom okně, limit {1}") \
  X(v_rate_few_label, "only {0} let through", "пропущено лишь {0}", "propuštěno jen {0}") \
  X(v_rate_ok, "no window let through more requests than the limit", "ни в одном окне не пропущено больше запросов, чем позволяет лимит", "v žádném okně neprošlo víc požadavků, než dovoluje limit") \
  X(v_recorded, "only {0} of {1} '{2}' steps succeeded (as the actors saw it)", "удалось только {0} из {1} шагов «{2}» (как видели акторы)", "povedlo se jen {0} z {1} kroků „{2}“ (jak to viděli aktéři)") \
  X(v_recorded_label, "only {0} of {1} succeeded", "удалось лишь {0} из {1}", "povedlo se jen {0} z {1}") \
  X(v_recorded_ok, "every step succeeded, as the actors saw it", "все шаги удались (как видели акторы)", "všechny kroky se povedly (jak to viděli aktéři)") \
  X(v_together, "{0}'s {1} at {2} changed {3} but not {4}: what it did apply stayed applied (no rollback)", "{1} от {0} в {2}: изменён {3}, но не {4} — что применено, то осталось (отката нет)", "{1} od {0} v {2}: změněn {3}, ale ne {4}; co se provedlo, zůstalo (nic se nevrací zpět)") \
  X(together_tx, "transaction (EXEC)", "транзакция (EXEC)", "transakce (EXEC)") \
  X(together_script, "script ({0})", "скрипт ({0})", "skript ({0})") \
  X(v_together_label, "{0} changed only {1}", "{0} изменил только {1}", "{0} změnil jen {1}") \
  X(v_together_ok, "the two keys changed together or not at all", "оба ключа менялись вместе или не менялись вовсе", "oba klíče se měnily společně, nebo vůbec") \
  X(v_wait, "{0}: {1} waited at the server longer than {2} behind other clients' commands (the longest: its {3} waited {4} behind {5}'s {6}, which held the server for {7})", "{0}: команд, ждавших на сервере дольше {2} за командами других клиентов: {1} (дольше всех ждала {3} — {4} за {6} от {5}, занявшей сервер на {7})", "{0}: příkazů, které na serveru čekaly déle než {2} za příkazy jiných klientů: {1} (nejdéle čekal {3}, {4} za {6} od {5}, který server zaměstnal na {7})") \
  X(v_wait_label, "waited {0} behind {1}", "ждал {0} за {1}", "čekal {0} za {1}") \
  X(v_processed_once_ok, "every entry had its effect exactly once", "каждая запись подействовала ровно один раз", "každý záznam se projevil právě jednou") \
  X(v_key_final_ok, "the key ends as it should", "ключ в конце такой, каким должен быть", "klíč končí tak, jak má") \
  X(v_twice, "{0} was processed {1} times: {2} accepted it from {3}", "{0}: обработок — {1}; ресурс {2} принял запись от {3}", "{0}: zpracováno {1}×; prostředek {2} přijal zápis od {3}") \
  X(v_twice_label, "{0} processed {1} times", "{0}: обработок — {1}", "{0}: zpracováno {1}×") \
  X(actor_at, "{0} at {1}", "{0} в {1}", "{0} v {1}") \
  X(v_never_event, "{0} was never processed: {1} accepted no write of it by the end of the run ({2})", "{0} так и не обработано: ресурс {1} до конца прогона ({2}) не принял ни одной записи о нём", "{0} nebylo nikdy zpracováno: prostředek {1} do konce běhu ({2}) nepřijal žádný jeho zápis") \
  X(v_never_entries, "entries of {0} never processed: {1}; {2} accepted no write of {3} by the end of the run ({4})", "необработанных записей потока {0}: {1}; ресурс {2} до конца прогона ({4}) не принял записей {3}", "nezpracovaných záznamů proudu {0}: {1}; prostředek {2} do konce běhu ({4}) nepřijal zápis {3}") \
  X(v_never_label, "never processed: {0}", "не обработано: {0}", "nezpracováno: {0}") \
  X(v_key_value, "{0} = {1}{2} ({3}, at the end of the run), expected {4}", "{0} = {1}{2} ({3}, в конце прогона), а ожидалось {4}", "{0} = {1}{2} ({3}, na konci běhu), očekáváno {4}") \
  X(v_key_value_label, "{0} = {1}, not {2}", "{0} = {1}, а не {2}", "{0} = {1}, ne {2}") \
  X(key_ttl_left, " ({0} of TTL left)", " (осталось TTL: {0})", " (zbývá TTL: {0})") \
  X(key_no_ttl, " (no TTL)", " (без TTL)", " (bez TTL)") \
  X(key_some_ttl, " (with a TTL)", " (с TTL)", " (s TTL)") \
  X(v_key_type, "{0} holds a {1} ({2}, at the end of the run), expected the string {3}", "{0} хранит тип {1} ({2}, в конце прогона), а ожидалась строка {3}", "{0} je typu {1} ({2}, na konci běhu), očekáván řetězec {3}") \
  X(v_key_expired, "{0} expired at {1} and is absent at the end ({2}, at the end of the run), expected {3}", "{0} истёк в {1}, и в конце его нет ({2}, в конце прогона), а ожидалось {3}", "{0} vypršel v {1} a na konci chybí ({2}, na konci běhu), očekáváno {3}") \
  X(v_key_deleted, "{0} was deleted at {1} and is absent at the end ({2}, at the end of the run), expected {3}", "{0} удалён в {1}, и в конце его нет ({2}, в конце прогона), а ожидалось {3}", "{0} byl smazán v {1} a na konci chybí ({2}, na konci běhu), očekáváno {3}") \
  X(v_key_never, "{0} never existed ({1}, at the end of the run), expected {2}", "{0} так и не появился ({1}, в конце прогона), а ожидалось {2}", "{0} nikdy neexistoval ({1}, na konci běhu), očekáváno {2}") \
  X(v_key_absent, "{0} does not exist ({1}, at the end of the run), expected {2}", "{0} не существует ({1}, в конце прогона), а ожидалось {2}", "{0} neexistuje ({1}, na konci běhu), očekáváno {2}") \
  X(v_key_absent_label, "{0} is absent, not {1}", "{0} нет, а ожидалось {1}", "{0} chybí, očekáváno {1}") \
  X(v_wait_ok, "no command waited long behind other clients' commands", "ни одна команда не ждала долго за командами других клиентов", "žádný příkaz nečekal dlouho za příkazy jiných klientů") \
  X(v_generic_label, "{0} violated", "{0}: нарушение", "{0}: porušení") \
  /* ---- Compare two runs (compare_view.cpp) ---- */ \
  X(cmp_button, "Compare...", "Сравнить...", "Porovnat...") \
  X(cmp_button_tip, "Compare this run with another: another variant, another seed or a saved trace, on one time axis with every difference listed.", "Сравнить этот прогон с другим: другой вариант, другое зерно или сохранённая трасса — на одной оси времени, со списком всех различий.", "Porovnat tento běh s jiným: jiná varianta, jiné semínko nebo uložený záznam, na jedné časové ose se seznamem všech rozdílů.") \
  X(cmp_title, "Two runs compared", "Сравнение двух прогонов", "Porovnání dvou běhů") \
  X(cmp_side_run, "{0}: {1}, {2}", "{0}: {1}, {2}", "{0}: {1}, {2}") \
  X(cmp_side_file, "{0}: the file {1}", "{0}: файл {1}", "{0}: soubor {1}") \
  X(cmp_b_with, "B: the same scenario with", "B: тот же сценарий, но", "B: týž scénář, ale") \
  X(cmp_compare, "Compare", "Сравнить", "Porovnat") \
  X(cmp_compare_tip, "Run B (fake Redis) and compare it with A.", "Выполнить прогон B (имитация Redis) и сравнить его с A.", "Spustit běh B (simulovaný Redis) a porovnat ho s A.") \
  X(cmp_or_file, "or B from a saved trace:", "или B из сохранённой трассы:", "nebo B z uloženého záznamu:") \
  X(cmp_open_file, "Compare with the file", "Сравнить с файлом", "Porovnat se souborem") \
  X(cmp_close, "Close", "Закрыть", "Zavřít") \
  X(cmp_verdicts_same, "Verdicts: the same in both runs.", "Вердикты в обоих прогонах одинаковы.", "Verdikty jsou v obou bězích stejné.") \
  X(cmp_verdict_flip, "{0}: in A {1}, in B {2}", "{0}: в A — {1}, в B — {2}", "{0}: v A {1}, v B {2}") \
  X(cmp_word_violated, "violated ({0})", "нарушено ({0})", "porušeno ({0})") \
  X(cmp_word_holds, "holds", "выполнено", "platí") \
  X(cmp_word_not_judged, "not judged", "не оценено", "neposouzeno") \
  X(cmp_word_not_checked, "not checked", "не проверялось", "nekontrolováno") \
  X(cmp_expectation, "the scenario's expectation", "ожидание сценария", "očekávání scénáře") \
  X(cmp_word_met, "met", "выполнено", "splněno") \
  X(cmp_word_not_met, "not met", "не выполнено", "nesplněno") \
  X(cmp_first_divergence, "The runs part at {0}: {1}", "Прогоны расходятся в {0}: {1}", "Běhy se rozcházejí v {0}: {1}") \
  X(cmp_first_divergence_mark, "runs part", "расхождение", "rozchod") \
  X(cmp_no_divergence, "No event differs.", "Ни одно событие не отличается.", "Žádná událost se neliší.") \
  X(cmp_counts, "Differences: {0} only in A, {1} only in B, {2} in their values, {3} in timing beyond {4}; {5} events aligned.", "Различия: только в A — {0}, только в B — {1}, в значениях — {2}, во времени больше чем на {4} — {3}; сопоставлено событий: {5}.", "Rozdíly: jen v A {0}, jen v B {1}, v hodnotách {2}, v čase o víc než {4} {3}; spárováno událostí: {5}.") \
  X(cmp_not_compared, "Not compared (only {0} records them): {1}", "Не сравнивались (их записывает только {0}): {1}", "Neporovnáno (zaznamenává je jen {0}): {1}") \
  X(cmp_only_in, "only in {0}", "только в {0}", "jen v {0}") \
  X(cmp_differs, "differs", "отличается", "liší se") \
  X(cmp_timing, "at another time", "раньше или позже", "dřív nebo později") \
  X(cmp_verdict_tag, "verdict", "вердикт", "verdikt") \
  X(cmp_event_of, "[{0}] {1}", "[{0}] {1}", "[{0}] {1}") \
  X(cmp_the_run, "the run", "прогон", "běh") \
  X(cmp_step, "step {0}", "шаг {0}", "krok {0}") \
  X(cmp_field_values, "{0}: {1} / {2}", "{0}: {1} / {2}", "{0}: {1} / {2}") \
  X(cmp_none, "(none)", "(нет)", "(žádné)") \
  X(cmp_times, "at {0} / {1}", "в {0} / {1}", "v {0} / {1}") \
  X(cmp_differences_list, "Every difference (click one: the playhead goes there)", "Все различия (щелчок — курсор туда)", "Všechny rozdíly (kliknutím na něj tam přejde ukazatel)") \
  X(cmp_more, "... and {0} more", "... и ещё {0}", "... a dalších {0}") \
  X(cmp_need_run, "run the scenario first: A is the run shown", "сначала выполните сценарий: A — это показанный прогон", "nejdřív spusťte scénář: A je zobrazený běh") \
  X(cmp_not_a_trace, "{0}: not a trace ({1})", "{0}: это не трасса ({1})", "{0}: není to záznam ({1})") \
  /* ---- Sweep a parameter (sweep_panel.cpp) ---- */ \
  X(sw_button, "Sweep...", "Перебор...", "Průchod...") \
  X(sw_button_tip, "Run the scenario over a range of one parameter and many seeds, and see where each check starts to fail.", "Прогнать сценарий по диапазону одного параметра на многих зёрнах и увидеть, где каждая проверка начинает нарушаться.", "Spustit scénář přes rozsah jednoho parametru a mnoho semínek a uvidět, kde která kontrola začne selhávat.") \
  X(sw_title, "Sweep: {0}", "Перебор: {0}", "Průchod: {0}") \
  X(sw_no_params, "This scenario has no parameter to sweep.", "У этого сценария нет параметров для перебора.", "Tento scénář nemá parametr k průchodu.") \
  X(sw_param, "parameter", "параметр", "parametr") \
  X(sw_from, "from", "от", "od") \
  X(sw_to, "to", "до", "do") \
  X(sw_steps, "points", "точек", "bodů") \
  X(sw_seeds, "seeds per point", "зёрен на точку", "semínek na bod") \
  X(sw_start, "Run the sweep", "Запустить перебор", "Spustit průchod") \
  X(sw_start_tip, "{0} runs on the fake Redis, in the background.", "Прогонов на имитации Redis: {0}, в фоне.", "Běhů na simulovaném Redisu: {0}, na pozadí.") \
  X(sw_running, "Running: {0} of {1} runs", "Выполняется: {0} из {1} прогонов", "Běží: {0} z {1} běhů") \
  X(sw_cancel, "Cancel", "Отмена", "Zrušit") \
  X(sw_cancelled, "Cancelled after {0} of {1} runs; the points not finished are left empty.", "Отменено: выполнено {0} из {1} прогонов; незавершённые точки пусты.", "Zrušeno: hotovo {0} z {1} běhů; nedokončené body zůstaly prázdné.") \
  X(sw_done, "{0} runs: seeds 1..{1} at each of {2} values of {3}.", "Прогонов: {0} — зёрна 1..{1} в каждом из {2} значений параметра «{3}».", "Běhů: {0}, semínka 1..{1} v každé z {2} hodnot parametru „{3}“.") \
  X(sw_error, "The sweep could not run: {0}", "Перебор не удалось выполнить: {0}", "Průchod nešlo provést: {0}") \
  X(sw_how_to_read, "Each row is a check, each mark a value of the parameter: the redder, the more seeds violated it there. Click a mark to open that run.", "Каждая строка — проверка, каждая метка — значение параметра: чем краснее, тем больше зёрен её нарушили. Щелчок по метке открывает этот прогон.", "Každý řádek je kontrola, každá značka hodnota parametru: čím červenější, tím víc semínek ji tam porušilo. Kliknutím na značku se ten běh otevře.") \
  X(sw_expectation_row, "expected outcome", "ожидаемый исход", "očekávaný výsledek") \
  X(sw_point_tip, "{0} = {1}: violated in {2} of {3} seeds", "{0} = {1}: нарушено на {2} из {3} зёрен", "{0} = {1}: porušeno na {2} z {3} semínek") \
  X(sw_point_unmet_tip, "{0} = {1}: the expectation not met in {2} of {3} seeds", "{0} = {1}: ожидание не выполнено на {2} из {3} зёрен", "{0} = {1}: očekávání nesplněno na {2} z {3} semínek") \
  X(sw_point_open, "Click: open seed {0} with {1} = {2}", "Щелчок: открыть зерно {0} при {1} = {2}", "Kliknutí: otevřít semínko {0} při {1} = {2}") \
  X(sw_point_unfinished, "not run (cancelled)", "не выполнено (отменено)", "neproběhlo (zrušeno)") \
  X(sw_legend_none, "no seed", "ни одного зерна", "žádné semínko") \
  X(sw_legend_all, "every seed", "все зёрна", "všechna semínka") \
  X(sw_legend_not_judged, "not judged", "не оценено", "neposouzeno") \
  X(sw_with_interventions, "With the what-if interventions in every run: {0}. They take the scenario's expected outcome away, so the plot has no row for it.", "С вмешательствами «что если» в каждом прогоне: {0}. Они отменяют ожидаемый исход сценария, поэтому строки для него на графике нет.", "Se zásahy „co kdyby“ v každém běhu: {0}. Ruší očekávaný výsledek scénáře, a proto pro něj graf nemá řádek.") \
  X(sw_legend_unmet, "expectation not met", "ожидание не выполнено", "očekávání nesplněno") \
  /* ---- The exercise panel ---- */ \
  X(exercise_button, "Exercise", "Упражнение", "Cvičení") \
  X(exercise_button_tip, "This scenario's exercise: a task to solve, hints, and a check of your answer.", "Упражнение этого сценария: задача, подсказки и проверка вашего ответа.", "Cvičení tohoto scénáře: úkol, nápovědy a kontrola vaší odpovědi.") \
  X(exercise_title, "Exercise: {0}", "Упражнение: {0}", "Cvičení: {0}") \
  X(ex_none, "This scenario has no exercise.", "У этого сценария нет упражнения.", "Tento scénář nemá cvičení.") \
  X(ex_task, "Task", "Задание", "Úkol") \
  X(ex_show_hint, "Show a hint", "Показать подсказку", "Ukázat nápovědu") \
  X(ex_hint_n, "Hint {0} of {1}", "Подсказка {0} из {1}", "Nápověda {0} z {1}") \
  X(ex_no_more_hints, "That was the last hint.", "Это была последняя подсказка.", "To byla poslední nápověda.") \
  X(ex_your_script, "Your script {0}", "Ваш скрипт {0}", "Váš skript {0}") \
  X(ex_restore_script, "Start again from the scenario's script", "Начать заново со скрипта сценария", "Začít znovu od skriptu scénáře") \
  X(ex_script_error, "The script does not load: line {0}: {1}", "Скрипт не загружается: строка {0}: {1}", "Skript se nenačte: řádek {0}: {1}") \
  X(ex_your_settings, "Your answer: the settings this exercise lets you change", "Ваш ответ — настройки, которые упражнение разрешает менять", "Vaše odpověď: nastavení, která cvičení dovoluje změnit") \
  X(ex_check, "Check", "Проверить", "Zkontrolovat") \
  X(ex_check_tip, "Grade your answer over seeds 1..{0} (fake Redis): every graded check must come out as the exercise requires.", "Проверить ответ на зёрнах 1..{0} (имитация Redis): каждая проверка должна дать то, что требует упражнение.", "Ohodnotit odpověď na semínkách 1..{0} (simulovaný Redis): každá kontrola musí dopadnout, jak cvičení žádá.") \
  X(ex_checking, "Checking: seed {0} of {1}", "Проверка: зерно {0} из {1}", "Kontrola: semínko {0} z {1}") \
  X(ex_cancel, "Cancel", "Отмена", "Zrušit") \
  X(ex_pass, "Passed: every graded check came out as required over seeds 1..{0}.", "Зачтено: все проверки дали нужный результат на зёрнах 1..{0}.", "Splněno: všechny kontroly dopadly podle požadavku na semínkách 1..{0}.") \
  X(ex_fail, "Not yet: seed {0} fails.", "Пока нет: зерно {0} не проходит.", "Ještě ne: semínko {0} neprošlo.") \
  X(ex_should_hold, "{0} should hold, but: {1}", "«{0}» должно выполняться, но: {1}", "„{0}“ má platit, ale: {1}") \
  X(ex_should_be_violated, "{0} should be violated, but it held: {1}", "«{0}» должно нарушаться, но выполнилось: {1}", "„{0}“ má být porušeno, ale platilo: {1}") \
  X(ex_not_judged, "{0} could not be judged ({1})", "«{0}» не удалось оценить ({1})", "„{0}“ nešlo posoudit ({1})") \
  X(ex_did_not_finish, "the run did not finish: {0}", "Прогон не завершился: {0}", "Běh neskončil: {0}") \
  X(ex_open_seed, "Open seed {0}", "Открыть зерно {0}", "Otevřít semínko {0}") \
  X(ex_open_seed_tip, "That seed's run on the timeline, the playhead at the failure.", "Прогон с этим зерном на временной шкале, курсор — на ошибке.", "Běh s tímto semínkem na časové ose, ukazatel na chybě.") \
  X(ex_cancelled, "The check was cancelled.", "Проверка отменена.", "Kontrola byla zrušena.") \
  X(ex_check_error, "The check could not run: {0}", "Проверку не удалось выполнить: {0}", "Kontrolu nešlo provést: {0}") \
  X(ex_passed_on, "Passed on {0}", "Зачтено {0}", "Splněno {0}") \
  X(ex_reset_progress, "Reset progress", "Сбросить прогресс", "Vynulovat postup") \
  X(ex_reset_confirm, "Forget which exercises you have passed? This cannot be undone.", "Забыть, какие упражнения вы прошли? Отменить это нельзя.", "Zapomenout, která cvičení jste splnili? Nelze to vrátit zpět.") \
  X(ex_reset_yes, "Forget them", "Забыть", "Zapomenout") \
  X(ex_reset_no, "Keep them", "Оставить", "Ponechat") \
  X(ex_progress_unreadable, "The progress file {0} cannot be read ({1}); it is kept as it is until you reset progress.", "Файл прогресса {0} не читается ({1}); он останется как есть, пока вы не сбросите прогресс.", "Soubor postupu {0} nelze přečíst ({1}); zůstane, jak je, dokud postup nevynulujete.") \
  X(ex_progress_not_saved, "Progress not saved: {0}", "Прогресс не сохранён: {0}", "Postup nebyl uložen: {0}") \
  /* ---- Time units ---- */ \
  X(unit_s, "s", "с", "s") \
  X(unit_ms, "ms", "мс", "ms") \
  X(unit_us, "us", "мкс", "µs") \
  X(unit_conns, "conns", "соед.", "spoj.") \
  X(unit_entries, "entries", "записей", "záznamů") \
  X(unit_items, "items", "шт.", "ks") \
  X(unit_batches, "batches", "пакетов", "dávek") \
  X(unit_events, "events", "событий", "událostí") \
  X(unit_messages, "messages", "сообщ.", "zpráv") \
  X(unit_requests, "requests", "запросов", "požadavků") \
  X(unit_retries, "retries", "повторов", "opakování")
// clang-format on

enum class S : uint16_t {
#define REDLAB_GUI_STRING_ID(id, en, ru, cs) id,
  REDLAB_GUI_STRINGS(REDLAB_GUI_STRING_ID)
#undef REDLAB_GUI_STRING_ID
      count_
};
inline constexpr size_t kStringCount = static_cast<size_t>(S::count_);

// The entry in one language.
const char* tr(S id, Lang lang);
// The entry with {0}, {1}, ... replaced by args (a missing argument stays as it is).
std::string trf(S id, Lang lang, std::initializer_list<std::string_view> args);
// "3 messages": n and its plural form from entry `forms` ("one|many" or "one|few|many").
std::string plural(int64_t n, S forms, Lang lang);
// Just the form, without the number.
std::string plural_form(int64_t n, S forms, Lang lang);
// The id's name ("run", "menu_file"), for tests and messages.
const char* string_id_name(S id);

// Times in words, in the language's units and decimal mark:
// time_words: like `redlab show` (scenario::format_time): "350 ms", "12.0 s" (tenths, cut).
std::string time_words(TimeUs t, Lang lang);
// seconds_words: milliseconds exact, "12.345 s".
std::string seconds_words(TimeUs t, Lang lang);
// ruler_words: the ruler and tooltips, exact for whole units: "0", "12.5 s", "350 ms", "120 us".
std::string ruler_words(TimeUs t, Lang lang);

// The speed of playback: "1.5x", in Russian and Czech "1,5×".
std::string speed_words(double speed, Lang lang);

// Trace event kinds and typed fields in words, for the inspector (event_words.cpp; a test holds
// them to docs/trace-format.md and REDLAB_TRACE_FIELDS). event_kind_words: nullptr for a kind
// the catalogue does not know; event_kind_label shows such a kind as it is.
const char* event_kind_words(std::string_view kind, Lang lang);
std::string event_kind_label(std::string_view kind, Lang lang);
const char* field_words(F field, Lang lang);
// An enumerated field value in words (a fault's kind, a transaction's outcome, an error class,
// where a server lane's events come from); nullptr for any other value.
const char* field_value_words(F field, std::string_view value, Lang lang);
// "label: value" per typed field: times with the language's units and decimal mark, enumerated
// values in words, check names through check_title (the scenario's own title) when given.
std::vector<std::string> event_fields_words(
    const TraceEvent& e, Lang lang,
    const std::function<std::string(F, std::string_view)>& check_title = {});

// "A, B and C" in the language.
std::string names_words(const std::vector<std::string>& names, Lang lang);

// A library topic in words: the scenario files name it in English, as a topic_* entry's
// English; an unknown topic is shown as it is (a test holds every scenario's topic to these).
std::string topic_words(const std::string& topic, Lang lang);

}  // namespace redlab::gui

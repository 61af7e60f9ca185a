// Script and Script.Run (redis/go-redis script.go): EVALSHA first, EVAL on NOSCRIPT.
#include "sim/client/client.h"
#include "sim/fake/sha1.h"

namespace redlab::client {

Script::Script(std::string src) : source(std::move(src)), sha1_hex(fake::sha1_hex(source)) {}

void Client::run_script(const Context& ctx, const Script& script, std::vector<std::string> keys,
                        std::vector<std::string> args, Done done) {
  auto build = [&](const std::string& verb, const std::string& body) {
    Argv argv{verb, body, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  Argv evalsha = build("EVALSHA", script.sha1_hex);
  Argv eval = build("EVAL", script.source);
  std::weak_ptr<bool> alive = alive_;
  do_command(ctx, std::move(evalsha),
             [this, alive, ctx, eval = std::move(eval), done = std::move(done)](Result r) mutable {
               auto a = alive.lock();
               if (!a || !*a) return;
               // HasErrorPrefix(err, "NOSCRIPT"), which also strips a leading "ERR ".
               std::string_view text = r.error.text;
               if (text.substr(0, 4) == "ERR ") text.remove_prefix(4);
               if (r.error.kind == ErrorKind::Server && text.substr(0, 8) == "NOSCRIPT") {
                 tracer_.event("script_fallback", -1, ctx.step, -1, "NOSCRIPT: EVAL", ctx.actor);
                 return do_command(ctx, std::move(eval), std::move(done));
               }
               done(std::move(r));
             });
}

}  // namespace redlab::client

// In-process throughput of the fake server: one thread, one pre-connected client, argv
// vectors built once, every command through Server::call (what benchmarks, unit tests and
// the fuzzer use). items_per_second is commands per second (a MULTI/INCR/INCR/EXEC
// transaction counts as one item). script/bench compares GET and SET with redis-benchmark
// against a real redis-server on loopback; keys and values are redis-benchmark's defaults
// (the key "key:__rand_int__" without -r, a 3-byte value).
//
// Each benchmark first checks that the command answers what Redis would; if not (a command
// family still missing), it reports the error instead of timing a stream of error replies.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "sim/core/reply.h"
#include "sim/fake/server.h"

namespace {

using redlab::Reply;
namespace fake = redlab::fake;

struct Fixture {
  fake::Server server;
  fake::ClientId client = server.connect(0);
  Reply call(const fake::Argv& argv) { return server.call(client, argv); }
};

// Skips the benchmark with a message when reply is not what was expected.
bool expect(benchmark::State& state, const Reply& got, const Reply& want, const char* what) {
  if (got == want) return true;
  std::string msg = std::string(what) + " answered " + redlab::format_short(got) + ", expected " +
                    redlab::format_short(want);
  state.SkipWithError(msg.c_str());
  return false;
}

void BM_Get(benchmark::State& state) {
  Fixture f;
  f.call({"SET", "key:__rand_int__", "xxx"});
  const fake::Argv get = {"GET", "key:__rand_int__"};
  if (!expect(state, f.call(get), Reply::bulk("xxx"), "GET")) return;
  for (auto _ : state) benchmark::DoNotOptimize(f.server.call(f.client, get));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Get);

void BM_Set(benchmark::State& state) {
  Fixture f;
  const fake::Argv set = {"SET", "key:__rand_int__", "xxx"};
  if (!expect(state, f.call(set), Reply::ok(), "SET")) return;
  for (auto _ : state) benchmark::DoNotOptimize(f.server.call(f.client, set));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Set);

void BM_Incr(benchmark::State& state) {
  Fixture f;
  const fake::Argv incr = {"INCR", "bench:counter"};
  if (!expect(state, f.call(incr), Reply::integer_reply(1), "INCR")) return;
  for (auto _ : state) benchmark::DoNotOptimize(f.server.call(f.client, incr));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Incr);

void BM_MultiExec(benchmark::State& state) {
  Fixture f;
  const fake::Argv multi = {"MULTI"};
  const fake::Argv incr = {"INCR", "bench:counter"};
  const fake::Argv exec = {"EXEC"};
  f.call(multi);
  f.call(incr);
  f.call(incr);
  Reply want = Reply::array({Reply::integer_reply(1), Reply::integer_reply(2)});
  if (!expect(state, f.call(exec), want, "MULTI/INCR/INCR/EXEC")) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.server.call(f.client, multi));
    benchmark::DoNotOptimize(f.server.call(f.client, incr));
    benchmark::DoNotOptimize(f.server.call(f.client, incr));
    benchmark::DoNotOptimize(f.server.call(f.client, exec));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MultiExec);

// The seeds' safe unlock: delete the lock only if it still holds our token. The key holds
// another client's token, so every call runs the GET and the comparison and deletes nothing
// (the state stays the same across iterations).
void BM_EvalshaUnlock(benchmark::State& state) {
  Fixture f;
  const std::string script =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
      "else return 0 end";
  Reply sha = f.call({"SCRIPT", "LOAD", script});
  if (sha.kind != Reply::Kind::Bulk) {
    std::string msg = "SCRIPT LOAD answered " + redlab::format_short(sha);
    state.SkipWithError(msg.c_str());
    return;
  }
  f.call({"SET", "bench:lock", "token-of-another-client"});
  const fake::Argv evalsha = {"EVALSHA", sha.str, "1", "bench:lock", "my-token"};
  if (!expect(state, f.call(evalsha), Reply::integer_reply(0), "EVALSHA")) return;
  for (auto _ : state) benchmark::DoNotOptimize(f.server.call(f.client, evalsha));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvalshaUnlock);

}  // namespace

BENCHMARK_MAIN();

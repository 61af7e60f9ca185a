// The GUI timeline's budgets (issue 5): with a trace of 1,000,000 events, loading it (JSON
// parse + model build) takes at most 2 s, and building one frame of the timeline at 1920x1080
// (ImGui new frame to render data; no window, no GPU) takes at most 4 ms of CPU, median.
//
// The trace is realistic rather than uniform: the three core scenarios (lock holders with
// TTLs and a violation, pub/sub with a reconnect gap and lost messages, pool exhaustion with
// waits and timeouts) run once and are repeated side by side, shifted by 25 s per round, with
// connection ids and span ids (and the `cause` fields that name spans) renumbered, until the
// trace has a million events (version 2 traces: about 640 rounds, 4.4 h of virtual time), each
// round ending with its connections closed; the run-level events (run_start, server_start,
// the verdicts) appear once. Run with --benchmark_repetitions=N to get medians (script/bench
// does).
#include <benchmark/benchmark.h>

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "app/gui/gui_app.h"
#include "app/gui/timeline_model.h"
#include "app/gui/timeline_view.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace {

using namespace redlab;

constexpr size_t kEventsTarget = 1'000'000;
constexpr TimeUs kRoundUs = 25 * kUsPerSecond;

std::string scenario_path(const std::string& id) {
  return (std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "scenarios" /
          (id + ".json"))
      .string();
}

Trace build_big_trace() {
  std::vector<std::vector<TraceEvent>> sources;
  std::set<std::string> head_seen;
  Trace trace;
  for (const char* id : {"ttl-double-holder", "pubsub-reconnect-loss", "pool-exhaustion"}) {
    scenario::RunResult r =
        scenario::run_scenario(scenario::load_scenario_file(scenario_path(id)), {});
    std::vector<TraceEvent> events;
    // The run-level head (run_start, server_start) is added once at the start, the tail
    // (run_end, the verdicts) once at the very end.
    for (const TraceEvent& e : r.trace.events()) {
      if (e.kind == "run_end" || e.kind == "check" || e.kind == "violation" ||
          e.kind == "expectation")
        continue;
      if (e.kind == "run_start" || e.kind == "server_start" || e.kind == "resource_start") {
        if (head_seen.insert(e.kind + e.actor).second) trace.append(e);
        continue;
      }
      events.push_back(e);
    }
    sources.push_back(std::move(events));
    for (const auto& [key, value] : r.trace.meta()) trace.set_meta(key, value);
  }
  constexpr int64_t kConnectionsPerRound = 1000;
  // Span ids stay dense (the reader keeps a table by id): each source's ids, shifted past
  // those of the sources and rounds before it.
  std::vector<int64_t> span_base(sources.size() + 1, 0);
  for (size_t s = 0; s < sources.size(); s++) {
    int64_t most = 0;
    for (const TraceEvent& e : sources[s]) most = std::max({most, e.span, e.ends});
    span_base[s + 1] = span_base[s] + most;
  }
  int64_t head_spans = 0;
  for (const TraceEvent& e : trace.events()) head_spans = std::max(head_spans, e.span);
  auto respan = [&](int64_t id, int64_t round, int source) {
    return id > 0 ? head_spans + round * span_base.back() + span_base[source] + id : id;
  };
  for (int64_t round = 0; trace.size() < kEventsTarget; round++) {
    // Merge the three sources by time (each is sorted), shifted into this round.
    std::vector<size_t> next(sources.size(), 0);
    std::set<std::pair<int64_t, std::string>> connections;  // (id, actor) used this round
    for (;;) {
      int best = -1;
      for (size_t s = 0; s < sources.size(); s++)
        if (next[s] < sources[s].size() &&
            (best < 0 || sources[s][next[s]].time_us < sources[best][next[best]].time_us))
          best = static_cast<int>(s);
      if (best < 0 || trace.size() >= kEventsTarget) break;
      TraceEvent e = sources[best][next[best]++];
      e.time_us += round * kRoundUs;
      e.span = respan(e.span, round, best);
      e.ends = respan(e.ends, round, best);
      if (const int64_t* cause = e.num(F::cause)) e.with(F::cause, respan(*cause, round, best));
      if (e.connection >= 0) {
        e.connection += round * kConnectionsPerRound + best * 100;
        connections.insert({e.connection, e.actor});
      }
      trace.append(std::move(e));
    }
    // Each round ends as a run does when its clients shut down: connections closed (a BLPOP
    // still blocked at the end stops there instead of staying open for the rest of the trace).
    for (const auto& [connection, actor] : connections)
      trace.append(TraceEvent{(round + 1) * kRoundUs - 1, "conn_close", actor, connection, -1, -1,
                              "client closed"});
  }
  const TimeUs end_us = trace.events().back().time_us;
  trace.append(TraceEvent{end_us, "run_end", "", -1, -1, -1, ""});
  // A violation per round (every one is its own event), then the check.
  const int64_t rounds = end_us / kRoundUs + 1;
  for (int64_t round = 0; round < rounds; round++)
    trace.append(
        TraceEvent{end_us, "violation", "", -1, -1, -1, "A and B held lock:job:42 together"}
            .with(F::check, "mutual_exclusion")
            .with(F::from_us, round * kRoundUs + 10 * kUsPerSecond)
            .with(F::to_us, round * kRoundUs + 12 * kUsPerSecond)
            .with(F::who, std::vector<std::string>{"A", "B"}));
  trace.append(TraceEvent{end_us, "check", "", -1, -1, -1, "A and B held lock:job:42 together"}
                   .with(F::check, "mutual_exclusion")
                   .with(F::check_kind, "mutual_exclusion")
                   .with(F::ok, int64_t{0})
                   .with(F::violations, rounds));
  return trace;
}

const std::string& big_json() {
  static const std::string json = [] {
    std::string text = trace_to_json(build_big_trace());
    std::string error;
    if (!trace_from_json(text, &error)) {
      std::fprintf(stderr, "the benchmark's trace does not read back: %s\n", error.c_str());
      std::abort();
    }
    return text;
  }();
  return json;
}

// (a) Loading: parse the file's text and build the model from scratch.
void BM_LoadTrace1M(benchmark::State& state) {
  const std::string& json = big_json();
  size_t events = 0;
  for (auto _ : state) {
    std::string error;
    std::optional<Trace> trace = trace_from_json(json, &error);
    if (!trace) {
      state.SkipWithError(error.c_str());
      return;
    }
    gui::TimelineModel model;
    model.update(*trace);
    events = model.event_count();
    benchmark::DoNotOptimize(model.lanes().data());
    state.PauseTiming();  // freeing a million events is not part of loading them
    trace.reset();
    model.reset();
    state.ResumeTiming();
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["json_MB"] = static_cast<double>(json.size()) / 1e6;
}
BENCHMARK(BM_LoadTrace1M)->Unit(benchmark::kMillisecond)->Iterations(1);

// Only the model build, to tell the two halves of loading apart.
void BM_BuildModel1M(benchmark::State& state) {
  static const Trace trace = *trace_from_json(big_json());
  for (auto _ : state) {
    gui::TimelineModel model;
    model.update(trace);
    benchmark::DoNotOptimize(model.lanes().data());
  }
}
BENCHMARK(BM_BuildModel1M)->Unit(benchmark::kMillisecond)->Iterations(1);

// Of that, the trace reader's index alone (TraceIndex, which the model builds first).
void BM_BuildIndex1M(benchmark::State& state) {
  static const Trace trace = *trace_from_json(big_json());
  for (auto _ : state) {
    TraceIndex index(trace);
    benchmark::DoNotOptimize(index.size());
  }
}
BENCHMARK(BM_BuildIndex1M)->Unit(benchmark::kMillisecond)->Iterations(1);

// (b) One frame at 1920x1080, headless: NewFrame, a full-window timeline, Render. Whole trace
// or zoomed, everything shown; then as a class sees it (the future after the playhead hidden),
// and that in presenter mode's large type (marks and text twice the size).
enum class Frame { whole, zoomed, so_far, presenter };
void frame_bench(benchmark::State& state, Frame mode) {
  const bool zoomed = mode == Frame::zoomed;
  static const Trace trace = *trace_from_json(big_json());
  static const gui::TimelineModel model = [] {
    gui::TimelineModel m;
    m.update(trace);
    return m;
  }();
  ImGuiContext* context = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(1920, 1080);
  io.IniFilename = nullptr;
  // What the app's OpenGL 3 renderer declares: draw lists may pass 65,536 vertices.
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  io.MousePos = ImVec2(960, 500);  // over the lanes: hover and tooltip work is included
  gui::TimelineView view;
  view.fit(model);
  if (zoomed) {
    // Ten seconds in the middle of the trace: a round's holds, commands and arrows.
    TimeUs mid_us = model.end_us() / 2;
    view.view_from_us = mid_us;
    view.view_to_us = mid_us + 10 * kUsPerSecond;
  }
  view.playhead_us = model.end_us() / 3;
  if (mode == Frame::so_far || mode == Frame::presenter) view.horizon_us = view.playhead_us;
  if (mode == Frame::presenter) {
    view.scale = 2;
    io.FontGlobalScale = 2;
  }
  int64_t drawn = 0, folded = 0, folds = 0, arrows = 0, vertices = 0;
  for (auto _ : state) {
    io.DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("timeline", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
    view.draw(model, trace, ImVec2(0, 0));
    ImGui::End();
    ImGui::Render();
    drawn = view.last_draw.items_drawn;
    folded = view.last_draw.items_folded;
    folds = view.last_draw.folds_drawn;
    arrows = view.last_draw.arrows_drawn;
    vertices = ImGui::GetDrawData()->TotalVtxCount;
  }
  state.counters["items_drawn"] = static_cast<double>(drawn);
  state.counters["items_folded"] = static_cast<double>(folded);
  state.counters["folds"] = static_cast<double>(folds);
  state.counters["arrows"] = static_cast<double>(arrows);
  state.counters["vertices"] = static_cast<double>(vertices);
  ImGui::DestroyContext(context);
}
void BM_Frame1M_WholeTrace(benchmark::State& state) {
  frame_bench(state, Frame::whole);
}
void BM_Frame1M_Zoomed(benchmark::State& state) {
  frame_bench(state, Frame::zoomed);
}
void BM_Frame1M_SoFar(benchmark::State& state) {
  frame_bench(state, Frame::so_far);
}
void BM_Frame1M_Presenter(benchmark::State& state) {
  frame_bench(state, Frame::presenter);
}
BENCHMARK(BM_Frame1M_WholeTrace)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Frame1M_Zoomed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Frame1M_SoFar)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Frame1M_Presenter)->Unit(benchmark::kMillisecond);

// (c) A what-if edit (issue 12): an intervention moved in time, as a dragged marker does it
// every frame. The fake re-run from the start with the interventions, the timeline model
// rebuilt, and the next whole frame of the app (every panel, the faint original under the
// lanes) at 1600x900, headless. The original run is not redone (its choices did not change).
// Target: 16 ms median, for every core scenario.
void whatif_bench(benchmark::State& state, const char* id) {
  ::setenv("REDLAB_SCENARIOS",
           (std::filesystem::path(scenario_path(id)).parent_path()).string().c_str(), 1);
  ImGuiContext* context = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(1600, 900);
  io.IniFilename = nullptr;
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  {
    gui::AppOptions options;
    options.persist = false;
    options.keep_progress = false;
    gui::App app(options);
    if (!app.open_scenario(id) || !app.run(false)) {
      state.SkipWithError(app.error().c_str());
      ImGui::DestroyContext(context);
      return;
    }
    app.set_reveal(true);
    // A pause of the scenario's first client (its first lane: an instance's name) early
    // in the run, so the whole rest of the run changes when it moves.
    std::string target;
    for (const gui::Lane& lane : app.model().lanes())
      if (lane.kind == gui::LaneKind::actor && target.empty()) target = lane.name;
    std::string error;
    auto iv =
        gui::parse_intervention(*app.scenario(), "pause " + target + " at 100 for 300", &error);
    if (!iv || !app.add_intervention(*iv)) {
      state.SkipWithError((error + app.error()).c_str());
      ImGui::DestroyContext(context);
      return;
    }
    auto frame = [&] {
      io.DeltaTime = 1.0f / 60;
      ImGui::NewFrame();
      app.frame(io.DeltaTime);
      ImGui::Render();
    };
    frame();
    int64_t at_ms = 100, events = 0;
    for (auto _ : state) {
      at_ms = at_ms == 100 ? 150 : 100;
      gui::Intervention moved = app.interventions().front();
      moved.at_ms = at_ms;
      if (!app.replace_intervention(0, moved)) state.SkipWithError(app.error().c_str());
      frame();
      events = int64_t(app.trace().size());
    }
    state.counters["trace_events"] = static_cast<double>(events);
  }
  ImGui::DestroyContext(context);
}
void BM_WhatIf_TtlDoubleHolder(benchmark::State& state) {
  whatif_bench(state, "ttl-double-holder");
}
void BM_WhatIf_ForgedFence(benchmark::State& state) {
  whatif_bench(state, "forged-fence");
}
void BM_WhatIf_PubsubReconnectLoss(benchmark::State& state) {
  whatif_bench(state, "pubsub-reconnect-loss");
}
void BM_WhatIf_PoolExhaustion(benchmark::State& state) {
  whatif_bench(state, "pool-exhaustion");
}
void BM_WhatIf_WatchRetryStorm(benchmark::State& state) {
  whatif_bench(state, "watch-retry-storm");
}
BENCHMARK(BM_WhatIf_TtlDoubleHolder)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIf_ForgedFence)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIf_PubsubReconnectLoss)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIf_PoolExhaustion)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIf_WatchRetryStorm)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

// The background job the exercise panel's grade and the sweep panel run on: progress seen while
// it works, its result or its error handed over once, cancel and the destructor stopping it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "app/gui/background_job.h"

namespace redlab::gui {
namespace {

using namespace std::chrono_literals;

// Polls as the UI does every frame, until the outcome comes (or a generous bound).
template <class R>
std::optional<typename BackgroundJob<R>::Outcome> outcome_of(BackgroundJob<R>& job) {
  for (int i = 0; i < 20000; ++i) {
    if (auto out = job.poll()) return out;
    std::this_thread::sleep_for(1ms);
  }
  return std::nullopt;
}

TEST(BackgroundJob, ShowsProgressWhileWorkingAndHandsTheResultOverOnce) {
  std::atomic<bool> go{false}, reported{false};
  BackgroundJob<int> job(
      [&](const auto& progress, const std::atomic<bool>*) {
        progress(3, 10);
        reported = true;
        while (!go) std::this_thread::sleep_for(1ms);
        return 42;
      },
      10);
  while (!reported) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(job.progress(), (std::pair<int64_t, int64_t>{3, 10}));
  EXPECT_FALSE(job.poll());  // still working
  go = true;
  auto out = outcome_of(job);
  ASSERT_TRUE(out);
  ASSERT_TRUE(out->result);
  EXPECT_EQ(*out->result, 42);
  EXPECT_EQ(out->error, "");
  EXPECT_FALSE(job.poll());  // given once
}

TEST(BackgroundJob, AWorkThatThrowsHandsOverItsMessageAndNoResult) {
  BackgroundJob<int> job([](const auto&, const std::atomic<bool>*) -> int {
    throw std::runtime_error("scenario x.json: no such parameter \"pause\"");
  });
  auto out = outcome_of(job);
  ASSERT_TRUE(out);
  EXPECT_FALSE(out->result);
  EXPECT_EQ(out->error, "scenario x.json: no such parameter \"pause\"");
}

TEST(BackgroundJob, CancelReachesTheWorkWhichStillHandsOverWhatItDid) {
  std::atomic<bool> started{false};
  BackgroundJob<int> job([&](const auto&, const std::atomic<bool>* cancel) {
    int rounds = 0;
    started = true;
    while (!*cancel) {
      ++rounds;
      std::this_thread::sleep_for(1ms);
    }
    return -rounds;  // the caller's "cancelled after N" result
  });
  while (!started) std::this_thread::sleep_for(1ms);
  job.cancel();
  auto out = outcome_of(job);
  ASSERT_TRUE(out);
  ASSERT_TRUE(out->result);
  EXPECT_LE(*out->result, 0);
}

TEST(BackgroundJob, DestroyingARunningJobStopsItAndWaits) {
  std::atomic<bool> started{false}, ended{false};
  {
    BackgroundJob<int> job([&](const auto&, const std::atomic<bool>* cancel) {
      started = true;
      while (!*cancel) std::this_thread::sleep_for(1ms);
      ended = true;
      return 0;
    });
    while (!started) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(ended);  // the thread ran to its end before the job was gone
}

}  // namespace
}  // namespace redlab::gui

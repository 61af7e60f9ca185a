// Work a panel starts and the UI must not wait for (a grade over an exercise's seeds, a
// sweep): it runs on its own thread over copies of what it reads, reports progress, can be
// cancelled, and hands back its result or its error once. The UI polls it every frame, so no
// lock is ever held across a frame and nothing else in the App is touched from the thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace redlab::gui {

template <class Result>
class BackgroundJob {
 public:
  using Progress = std::function<void(int64_t done, int64_t total)>;
  struct Outcome {
    std::optional<Result> result;  // absent when the work threw
    std::string error;             // what it threw
  };

  // work(progress, cancel) runs on the new thread; it checks *cancel where it can stop.
  template <class Work>
  explicit BackgroundJob(Work work, int64_t total = 0) : shared_(std::make_shared<Shared>()) {
    shared_->total = total;
    thread_ = std::thread([shared = shared_, work = std::move(work)]() mutable {
      Outcome outcome;
      const Progress progress = [&shared](int64_t done, int64_t total) {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->done = done;
        shared->total = total;
      };
      try {
        outcome.result = work(progress, &shared->cancel);
      } catch (const std::exception& e) {
        outcome.error = e.what();
      }
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->outcome = std::move(outcome);
    });
  }
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;
  // A panel closed or the App gone while the work runs: stop it and wait (the work stops at
  // its next check of the flag; a fake run takes milliseconds).
  ~BackgroundJob() {
    cancel();
    if (thread_.joinable()) thread_.join();
  }

  // Asks the work to stop; its outcome (a partial result saying so) still comes from poll().
  void cancel() { shared_->cancel = true; }

  std::pair<int64_t, int64_t> progress() const {
    std::lock_guard<std::mutex> lock(shared_->mu);
    return {shared_->done, shared_->total};
  }

  // The outcome once the work has finished (the thread is joined then), else nothing. Gives
  // it once.
  std::optional<Outcome> poll() {
    std::optional<Outcome> out;
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      if (!shared_->outcome) return std::nullopt;
      out = std::move(shared_->outcome);
      shared_->outcome.reset();
    }
    if (thread_.joinable()) thread_.join();
    return out;
  }

  // Cancels and waits for the work to end, dropping its outcome.
  void stop() {
    cancel();
    if (thread_.joinable()) thread_.join();
  }

 private:
  // What the thread and the UI both touch; the thread holds its own reference to it.
  struct Shared {
    mutable std::mutex mu;
    int64_t done = 0, total = 0;
    std::optional<Outcome> outcome;  // set once, when the work ends
    std::atomic<bool> cancel{false};
  };
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace redlab::gui

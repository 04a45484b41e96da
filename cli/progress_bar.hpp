#pragma once
// A progress bar on stderr for work that takes more than a second: it appears only on a terminal,
// only once a second has passed, and redraws itself a few times a second (so a long variant still
// shows the clock moving). Nothing of it reaches stdout or the files a command writes.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace parasim::cli {

class ProgressBar {
 public:
  /// `enabled` false (not a terminal, --json) makes every call a no-op.
  ProgressBar(std::string what, std::size_t total, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void set_done(std::size_t done);
  /// Seconds since the bar was created.
  double elapsed() const;

 private:
  void draw(bool last);
  std::string what_;
  std::size_t total_;
  std::atomic<std::size_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  bool enabled_;
  bool drawn_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace parasim::cli

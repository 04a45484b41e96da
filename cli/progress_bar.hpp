#pragma once
// Progress on stderr for work that takes more than a second, shown only once a second has passed. On
// a terminal a bar that redraws itself a few times a second (so a long variant still shows the clock
// moving); elsewhere (a pipe, a CI log) a plain line every few seconds and one at the end. Nothing of
// it reaches stdout or the files a command writes.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace parasim::cli {

class ProgressBar {
 public:
  /// `enabled` false (--json, a rank other than the first) makes every call a no-op.
  ProgressBar(std::string what, std::size_t total, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void set_done(std::size_t done);
  /// Seconds since the bar was created.
  double elapsed() const;

 private:
  void draw(bool last);
  void print_line(bool last);
  std::string what_;
  std::size_t total_;
  std::atomic<std::size_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  bool enabled_;
  bool terminal_;          ///< redraw one bar in place; else plain lines
  double last_line_ = 0;   ///< when the last plain line was printed (seconds since the start)
  bool drawn_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace parasim::cli

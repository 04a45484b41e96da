#include "cli/progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

namespace parasim::cli {

ProgressBar::ProgressBar(std::string what, std::size_t total, bool enabled)
    : what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()), enabled_(enabled), terminal_(isatty(STDERR_FILENO) != 0) {
  if (!enabled_) return;
  ticker_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      if (elapsed() >= 1.0) draw(false);
    }
  });
}

ProgressBar::~ProgressBar() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    if (drawn_) draw(true);
  }
  wake_.notify_all();
  ticker_.join();
}

void ProgressBar::set_done(std::size_t done) { done_ = done; }

double ProgressBar::elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

// Plain lines are few: one once the first second has passed, then one every 5 seconds, and the last.
constexpr double kLineInterval = 5.0;

void ProgressBar::print_line(bool last) {
  const double now = elapsed();
  if (!last && drawn_ && now - last_line_ < kLineInterval) return;
  const std::size_t done = done_;
  const std::string what = what_.substr(0, what_.find_last_not_of(' ') + 1);
  std::cerr << fmt::format("{}: {}/{} ({:.0f}%), {:.0f} s{}\n", what, done, total_, 100.0 * static_cast<double>(done) / static_cast<double>(std::max<std::size_t>(1, total_)),
                           now, last ? ", done" : "")
            << std::flush;
  last_line_ = now;
  drawn_ = true;
}

void ProgressBar::draw(bool last) {
  if (!terminal_) return print_line(last);
  constexpr std::size_t width = 30;
  const std::size_t done = done_;
  const std::size_t filled = width * done / std::max<std::size_t>(1, total_);
  std::cerr << fmt::format("\r{} [{}{}] {}/{}  {:.0f} s ", what_, std::string(filled, '#'), std::string(width - filled, ' '), done, total_, elapsed())
            << (last ? "\n" : "") << std::flush;
  drawn_ = true;
}

}  // namespace parasim::cli

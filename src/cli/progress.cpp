// SPDX-License-Identifier: Apache-2.0
#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace jitterd {

std::string progress_line(const std::string& text, double elapsed_seconds, std::optional<double> length_seconds) {
  const double elapsed = std::max(0.0, elapsed_seconds);
  if (!length_seconds) return fmt::format("{}: {:.0f} s", text, std::floor(elapsed));
  return fmt::format("{}: {:.0f}/{:g} s", text, std::floor(std::min(elapsed, *length_seconds)), *length_seconds);
}

Progress::Progress() : Progress(isatty(STDERR_FILENO) == 1, stderr) {}

Progress::Progress(bool enabled, std::FILE* out, std::chrono::milliseconds redraw)
    : enabled_(enabled), out_(out), redraw_(redraw) {}

Progress::~Progress() {
  if (!enabled_) return;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  clear();
}

void Progress::step(std::string text, std::optional<Seconds> length) {
  if (!enabled_) return;
  {
    const std::lock_guard lock(mutex_);
    text_ = std::move(text);
    length_seconds_ = length ? std::optional<double>(length->count()) : std::nullopt;
    started_ = std::chrono::steady_clock::now();
    draw_locked();
  }
  // Started with the first step, so that it inherits the affinity the command has by then.
  if (!thread_.joinable()) thread_ = std::thread([this] { redraw_every_second(); });
}

void Progress::clear() {
  if (!enabled_) return;
  const std::lock_guard lock(mutex_);
  if (shown_) {
    std::fputs("\r\x1b[K", out_);  // to the line's start, erase to its end
    std::fflush(out_);
  }
  shown_ = false;
  text_.clear();
}

void Progress::draw_locked() {
  if (text_.empty()) return;
  const double elapsed = Seconds(std::chrono::steady_clock::now() - started_).count();
  std::fputs(("\r" + progress_line(text_, elapsed, length_seconds_) + "\x1b[K").c_str(), out_);
  std::fflush(out_);
  shown_ = true;
}

void Progress::redraw_every_second() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, redraw_, [this] { return stopping_; })) draw_locked();
}

}  // namespace jitterd

// SPDX-License-Identifier: Apache-2.0
// What a long command is doing and how far along it is, for a person at a terminal: one line on
// standard error ("sampling cpus 1-3: 12/60 s"), redrawn in place with \r once a second by a
// thread of its own and erased when the command moves on or ends. Only when standard error is a
// terminal (isatty): otherwise nothing is written and no thread starts, so scripts, pipes and
// tests see exactly the output they saw before. Create it after the calling thread is restricted
// to the housekeeping CPUs, so its thread (which inherits that affinity) never wakes on a sampled
// CPU. Its methods are for the thread that created it; the redrawing thread only reads, under a
// lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace jitterd {

// The line for a step `elapsed` into it: "text: 12/60 s" with a known length (elapsed capped at
// it), "text: 12 s" without. Pure.
std::string progress_line(const std::string& text, double elapsed_seconds, std::optional<double> length_seconds);

class Progress {
 public:
  using Seconds = std::chrono::duration<double>;

  // Enabled when standard error is a terminal.
  Progress();
  // Enabled as told, drawing on `out` and redrawing every `redraw` (tests).
  Progress(bool enabled, std::FILE* out, std::chrono::milliseconds redraw = std::chrono::seconds(1));
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  // A new step, drawn at once and then once a second; a length makes it "done/length".
  void step(std::string text, std::optional<Seconds> length = std::nullopt);
  // Erases the line (before the command prints anything of its own on standard error).
  void clear();

 private:
  void draw_locked();
  void redraw_every_second();

  const bool enabled_;
  std::FILE* const out_;
  const std::chrono::milliseconds redraw_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool shown_ = false;
  std::string text_;
  std::optional<double> length_seconds_;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

}  // namespace jitterd

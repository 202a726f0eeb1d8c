// SPDX-License-Identifier: Apache-2.0
#include "loops/loop_refusal_log.h"

namespace jitterd {

void LoopRefusalLog::seen(LoopFileId file) {
  const auto known = files_.find(file);
  if (known != files_.end()) known->second.scan = scan_;
}

void LoopRefusalLog::refused(LoopFileId file, LoopRefusal reason, std::string line, double now_unix) {
  const auto [known, first] = files_.try_emplace(file, Known{reason, scan_});
  known->second.scan = scan_;
  if (first) ++counts_[reason];
  if (!first && known->second.reason == reason) return;
  known->second.reason = reason;
  log(reason, std::move(line), now_unix);
}

void LoopRefusalLog::log(LoopRefusal reason, std::string line, double now_unix) {
  if (minute_start_ == 0) minute_start_ = now_unix;
  close_minute(now_unix);
  if (logged_in_minute_[reason] < kLoopLogLinesPerMinute) {
    ++logged_in_minute_[reason];
    lines_.push_back(std::move(line));
    return;
  }
  ++suppressed_[reason];
  ++left_out_in_minute_[reason];
}

void LoopRefusalLog::close_minute(double now_unix) {
  if (now_unix - minute_start_ < 60) return;
  for (const auto& [reason, count] : left_out_in_minute_)
    if (count > 0)
      lines_.push_back(std::to_string(count) + " more loop files refused (" +
                       std::string(loop_refusal_name(reason)) + ") in the last minute were not logged (at most " +
                       std::to_string(kLoopLogLinesPerMinute) +
                       " lines a minute per reason; jitterd_loop_log_lines_suppressed_total counts them)");
  left_out_in_minute_.clear();
  logged_in_minute_.clear();
  minute_start_ = now_unix;
}

void LoopRefusalLog::end_scan(double now_unix) {
  std::erase_if(files_, [&](const auto& entry) { return entry.second.scan != scan_; });
  ++scan_;
  if (minute_start_ != 0) close_minute(now_unix);
}

std::vector<std::string> LoopRefusalLog::take_lines() {
  std::vector<std::string> out;
  out.swap(lines_);
  return out;
}

}  // namespace jitterd

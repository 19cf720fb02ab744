/*
 * hls_stream.h - a stand-in for Vitis HLS's hls::stream, for C simulation with g++ alone.
 * Used only when the Vitis headers are not installed ($XILINX_HLS/include). Streams are unbounded
 * queues; dataflow processes run one after the other, so reading an empty stream is a bug in the
 * order of the calls or in the number of words a producer writes: it stops the program and names
 * the stream instead of hanging. Words left in a stream when it is destroyed are counted
 * (hls::leftover_words) so a test harness can report a producer that wrote too much.
 */
#ifndef SYSTOLIC_HLS_STREAM_SHIM_H
#define SYSTOLIC_HLS_STREAM_SHIM_H

#define SYSTOLIC_HLS_SHIM 1

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

namespace hls {

inline long &leftover_words() {
  static long count = 0;
  return count;
}

template <typename T>
class stream {
 public:
  stream() : name_("unnamed") {}
  explicit stream(const char *name) : name_(name) {}
  ~stream() {
    if (!queue_.empty()) {
      std::fprintf(stderr, "WARNING: hls::stream '%s' contains %lu leftover word(s)\n", name_.c_str(),
                   (unsigned long)queue_.size());
      leftover_words() += (long)queue_.size();
    }
  }

  T read() {
    if (queue_.empty()) {
      std::fprintf(stderr, "ERROR: hls::stream '%s' read while empty\n", name_.c_str());
      std::exit(3);
    }
    T value = queue_.front();
    queue_.pop_front();
    return value;
  }
  void read(T &value) { value = read(); }
  void write(const T &value) { queue_.push_back(value); }
  bool empty() const { return queue_.empty(); }
  bool full() const { return false; }
  unsigned long size() const { return queue_.size(); }
  stream &operator>>(T &value) {
    value = read();
    return *this;
  }
  stream &operator<<(const T &value) {
    write(value);
    return *this;
  }

 private:
  stream(const stream &);
  stream &operator=(const stream &);
  std::string name_;
  std::deque<T> queue_;
};

}  // namespace hls

#endif

/*
 * hls_stream.h - a stand-in for Vitis HLS's hls::stream, for C simulation with g++ alone.
 * Used only when the Vitis headers are not installed ($XILINX_HLS/include). Streams are unbounded
 * queues; dataflow processes run one after the other, so reading an empty stream is a bug in the
 * order of the calls or in the number of words a producer writes: it stops the program and names
 * the stream instead of hanging. Words left in a stream when it is destroyed are counted
 * (hls::leftover_words) so a test harness can report a producer that wrote too much.
 * With SYSTOLIC_TRACE defined, every read and write is reported to systolic_trace.h (the timed
 * C simulation, engine/csim/timed.py), keyed by the stream's name, and the dataflow processes run
 * as coroutines (systolic_trace.h `spawn`): a read of an empty stream or a write to a stream holding
 * `limit` words switches to another process instead, so streams hold a bounded number of words.
 */
#ifndef SYSTOLIC_HLS_STREAM_SHIM_H
#define SYSTOLIC_HLS_STREAM_SHIM_H

#define SYSTOLIC_HLS_SHIM 1

#include <cstdio>
#include <cstdlib>
#ifdef SYSTOLIC_TRACE
#include "systolic_trace.h"
#define SYSTOLIC_STREAM_OP(id, dir) systolic_trace::op(id, dir)
#define SYSTOLIC_STREAM_ID(name) systolic_trace::register_stream(name)
#define SYSTOLIC_STREAM_BASE : public systolic_trace::waitable
#else
#define SYSTOLIC_STREAM_BASE
#define SYSTOLIC_STREAM_OP(id, dir)
#define SYSTOLIC_STREAM_ID(name) 0
#endif

namespace hls {

inline long &leftover_words() {
  static long count = 0;
  return count;
}

/* A FIFO of unbounded depth; plain arrays rather than std::deque keep g++ fast. */
template <typename T>
class stream SYSTOLIC_STREAM_BASE {
 public:
  stream() : name_("unnamed"), data_(0), head_(0), tail_(0), capacity_(0), id_(SYSTOLIC_STREAM_ID("unnamed")) {
    bound();
  }
  explicit stream(const char *name)
      : name_(name), data_(0), head_(0), tail_(0), capacity_(0), id_(SYSTOLIC_STREAM_ID(name)) {
    bound();
  }
  ~stream() {
    if (tail_ > head_) {
      std::fprintf(stderr, "WARNING: hls::stream '%s' contains %lu leftover word(s)\n", name_, tail_ - head_);
      leftover_words() += (long)(tail_ - head_);
    }
    delete[] data_;
  }

  T read() {
#ifdef SYSTOLIC_TRACE
    while (head_ == tail_ && systolic_trace::block(this, 0)) {
    }
#endif
    if (head_ == tail_) {
      std::fprintf(stderr, "ERROR: hls::stream '%s' read while empty\n", name_);
      std::exit(3);
    }
    SYSTOLIC_STREAM_OP(id_, 0);
    T value = data_[head_++];
    counted();
    return value;
  }
  void read(T &value) { value = read(); }
  void write(const T &value) {
#ifdef SYSTOLIC_TRACE
    while (tail_ - head_ >= limit && systolic_trace::block(this, 1)) {
    }
#endif
    if (tail_ == capacity_) make_room();
    SYSTOLIC_STREAM_OP(id_, 1);
    data_[tail_++] = value;
    counted();
  }
  bool empty() const { return head_ == tail_; }
  bool full() const { return false; }
  unsigned long size() const { return tail_ - head_; }
  stream &operator>>(T &value) {
    value = read();
    return *this;
  }
  stream &operator<<(const T &value) {
    write(value);
    return *this;
  }

 private:
#ifdef SYSTOLIC_TRACE
  void bound() {
    wait_name = name_;
    count = 0;
    limit = systolic_trace::fifo_words();
  }
  void counted() { count = tail_ - head_; }
#else
  void bound() {}
  void counted() {}
#endif
  stream(const stream &);
  stream &operator=(const stream &);
  void make_room() {
    unsigned long n = tail_ - head_;
    unsigned long capacity = n * 2 < capacity_ ? capacity_ : (capacity_ ? capacity_ * 2 : 16);
    T *data = new T[capacity];
    for (unsigned long k = 0; k < n; k++) data[k] = data_[head_ + k];
    delete[] data_;
    data_ = data;
    head_ = 0;
    tail_ = n;
    capacity_ = capacity;
  }
  const char *name_;
  T *data_;
  unsigned long head_, tail_, capacity_;
  long id_;
};

}  // namespace hls

#endif

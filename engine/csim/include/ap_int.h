/*
 * ap_int.h - a stand-in for Vitis HLS's ap_uint<N> and ap_int<N>, for C simulation with g++ alone.
 * Used only when the Vitis headers are not installed ($XILINX_HLS/include), like hls_stream.h beside
 * it. It covers what the exported kernel uses them for: loop counters and index arithmetic of at
 * most 63 bits (64 for ap_int). A value is kept reduced to N bits (unsigned: modulo 2^N; signed:
 * sign-extended two's complement), so assignment and ++ / -- / op= wrap as in hardware; in an
 * expression it converts to long long, so sums and products of narrow values are computed wide and
 * never overflow (Vitis widens an operator's result type the same way). Bit selection, ranges,
 * concatenation and the wider types of the real library are not provided.
 */
#ifndef SYSTOLIC_AP_INT_SHIM_H
#define SYSTOLIC_AP_INT_SHIM_H

#define SYSTOLIC_AP_INT_SHIM 1

namespace systolic_ap {

template <bool B, typename T = void>
struct enable_if {};
template <typename T>
struct enable_if<true, T> { typedef T type; };

/* The integral and floating types a value converts from (what an index expression can hold). */
template <typename T> struct arithmetic { enum { value = 0 }; };
template <> struct arithmetic<bool> { enum { value = 1 }; };
template <> struct arithmetic<char> { enum { value = 1 }; };
template <> struct arithmetic<signed char> { enum { value = 1 }; };
template <> struct arithmetic<unsigned char> { enum { value = 1 }; };
template <> struct arithmetic<short> { enum { value = 1 }; };
template <> struct arithmetic<unsigned short> { enum { value = 1 }; };
template <> struct arithmetic<int> { enum { value = 1 }; };
template <> struct arithmetic<unsigned> { enum { value = 1 }; };
template <> struct arithmetic<long> { enum { value = 1 }; };
template <> struct arithmetic<unsigned long> { enum { value = 1 }; };
template <> struct arithmetic<long long> { enum { value = 1 }; };
template <> struct arithmetic<unsigned long long> { enum { value = 1 }; };
template <> struct arithmetic<float> { enum { value = 1 }; };
template <> struct arithmetic<double> { enum { value = 1 }; };

/* An N-bit integer, unsigned (S false) or signed. */
template <int N, bool S>
class fixed_int {
  static_assert(N >= 1 && N <= (S ? 64 : 63), "the ap_int.h shim holds at most 63 unsigned / 64 signed bits");

 public:
  static const int width = N;

  fixed_int() : v_(0) {}
  template <typename T>
  fixed_int(T x, typename enable_if<arithmetic<T>::value, int>::type = 0) : v_(reduce((long long)x)) {}
  template <int M, bool T>
  fixed_int(const fixed_int<M, T> &x) : v_(reduce(x.to_int64())) {}

  operator long long() const { return v_; }
  int to_int() const { return (int)v_; }
  unsigned to_uint() const { return (unsigned)v_; }
  long to_long() const { return (long)v_; }
  unsigned long to_ulong() const { return (unsigned long)v_; }
  long long to_int64() const { return v_; }
  unsigned long long to_uint64() const { return (unsigned long long)v_; }
  int length() const { return N; }

  fixed_int &operator++() { v_ = reduce(v_ + 1); return *this; }
  fixed_int &operator--() { v_ = reduce(v_ - 1); return *this; }
  fixed_int operator++(int) { fixed_int old(*this); ++*this; return old; }
  fixed_int operator--(int) { fixed_int old(*this); --*this; return old; }

  template <typename T> fixed_int &operator+=(const T &x) { v_ = reduce(v_ + (long long)x); return *this; }
  template <typename T> fixed_int &operator-=(const T &x) { v_ = reduce(v_ - (long long)x); return *this; }
  template <typename T> fixed_int &operator*=(const T &x) { v_ = reduce(v_ * (long long)x); return *this; }
  template <typename T> fixed_int &operator/=(const T &x) { v_ = reduce(v_ / (long long)x); return *this; }
  template <typename T> fixed_int &operator%=(const T &x) { v_ = reduce(v_ % (long long)x); return *this; }
  template <typename T> fixed_int &operator&=(const T &x) { v_ = reduce(v_ & (long long)x); return *this; }
  template <typename T> fixed_int &operator|=(const T &x) { v_ = reduce(v_ | (long long)x); return *this; }
  template <typename T> fixed_int &operator^=(const T &x) { v_ = reduce(v_ ^ (long long)x); return *this; }
  template <typename T> fixed_int &operator<<=(const T &x) { v_ = reduce((long long)((unsigned long long)v_ << (long long)x)); return *this; }
  template <typename T> fixed_int &operator>>=(const T &x) { v_ = reduce(v_ >> (long long)x); return *this; }

 private:
  static long long reduce(long long x) {
    if (N == 64) return x;
    const unsigned long long mask = (1ULL << (N == 64 ? 0 : N)) - 1;
    const unsigned long long bits = (unsigned long long)x & mask;
    if (S && (bits >> (N - 1)) & 1ULL) return (long long)(bits | ~mask);  /* sign-extend */
    return (long long)bits;
  }
  long long v_;
};

}  // namespace systolic_ap

template <int N>
using ap_uint = systolic_ap::fixed_int<N, false>;
template <int N>
using ap_int = systolic_ap::fixed_int<N, true>;

#endif

/*
 * systolic_trace.h - the recorder of a timed C simulation (engine/csim/trace.py, engine/csim/timed.py).
 *
 * engine/csim/trace.py instruments a copy of the exported kernel with the macros below; the bundled
 * hls_stream.h reports every read and write when SYSTOLIC_TRACE is defined. Per replay thread (a
 * dataflow process of kernel0, or a helper call site that runs in parallel with its siblings) the
 * recorder writes one record per invocation of a pipelined loop nest (its iterations and, per
 * stream, how many words it read or wrote and at which first and last iteration), one record per
 * stream access outside a pipelined loop (a step), and the fork / join / begin / end points of
 * parallel helper calls. Records go to two binary files in $SYSTOLIC_TRACE_DIR:
 *   segments.bin  int64 rows (thread, kind, a, n, first op, reads, writes, ready)   a = loop or group
 * ready: in straight-line code (a PE body outside any pipelined loop), the cycles after the last
 * stream read at which the value the record writes (or, for a loop, everything computed before
 * it) is ready: the operator latencies of the statements that computed it since that read
 * (SYSTOLIC_TRACE_VALUE / _READY / _AT, emitted by engine/csim/trace.py).
 *   ops.bin       int64 rows (stream, dir, count, first, last)               dir 0 read, 1 write
 * Synchronisation tokens of parallel calls use negative stream ids: -(2t+1) starts thread t,
 * -(2t+2) tells its parent it is done. streams.tsv, threads.tsv and sites.tsv name the ids.
 * A kernel that calls its dataflow region once per pass marks each call (SYSTOLIC_TRACE_PASS):
 * passes.tsv lists the first thread of every pass after the first; the replay runs them in turn.
 * DRAM: engine/csim/trace.py turns the m_axi pointer parameters of the functions kernel0 hands its
 * ports to into `dram_ptr`s, so every read and write of a bus word on DRAM is reported (`dram`):
 * port k is kernel0's k-th pointer argument, registered with its word size at kernel0's entry
 * (ports.tsv: port, name, word bytes). Inside a pipelined loop invocation the words of each
 * (port, direction) form bursts as an AXI adapter would (consecutive word addresses, cut at a 4 KB
 * page, at the burst cap and at the invocation's start; $SYSTOLIC_TRACE_AXI = "max burst beats,
 * boundary bytes"): the invocation's record is followed in dram.bin by int64 rows
 * (segment, port * 2 + dir, burst length, bursts of that length). With $SYSTOLIC_TRACE_DRAM_LOG
 * set, every access is also logged there as int64 rows (port * 2 + dir, word address, invocation),
 * in program order, and the ports named in <log>.ports.tsv (bench/bench_dram_trace.py).
 * Recurrence sites (an accumulation into a local array element) report the tightest ratio
 * (updates of one element in an iteration) / (iterations until the next update of it).
 * The estimated size of the trace in memory is bounded by $SYSTOLIC_TRACE_BUDGET bytes (each
 * record costing $SYSTOLIC_TRACE_SEG_BYTES / $SYSTOLIC_TRACE_OP_BYTES): past it the program stops
 * with exit status 5 instead of filling the disk or the memory of the replay.
 */
#ifndef SYSTOLIC_TRACE_H
#define SYSTOLIC_TRACE_H

#include <algorithm>
#include <functional>

/* The recorder itself is engine/csim/include/systolic_trace.cpp, built once and linked. */
namespace systolic_trace {
/* The dataflow processes of a region call run as coroutines of one thread (spawned by the
   instrumented region, run by `run_all` before it returns): a stream read waits for a word and a
   write for one of the `limit` slots (initially $SYSTOLIC_TRACE_FIFO_WORDS, 1024) by switching to
   the next process that can go on, so the memory the streams hold stays bounded whatever the size
   of the problem. When every unfinished process waits, a writer's stream is given twice the slots
   (a FIFO deeper than the limit); when none waits to write, the first reader's stream is reported
   as read while empty (exit status 3), as the sequential shim does. */
struct waitable {
  const char *wait_name;
  unsigned long count, limit;
};
void spawn(long process, std::function<void()> body);
void run_all();
bool block(waitable *stream, int dir);  // false outside a spawned process (the caller goes on sequentially)
unsigned long fifo_words();

long register_stream(const char *name);
void op(long stream, long dir);
void process(long index);
void pass();
void enter(long loop);
void iteration(long loop);
void exit_loop(long loop);
void fork(long group, long members);
void join(long group, long members);
void call(long group, long member);
void ret();
void update(long site, const void *element);
void value(long id, long ready);
long ready_of(long id);
void at(long ready);
void finish();
void dram_port(long port, const char *name, const void *base, long word_bytes);
long dram_port_of(const void *pointer, long word_bytes, long *offset);
void dram(long port, long index, long dir);

/* A bus word of a DRAM port: reading it (conversion) or writing it (assignment) is reported. */
template <typename T>
struct dram_ref {
  T *p;
  long port, index;
  operator T() const {
    dram(port, index, 0);
    return *p;
  }
  dram_ref &operator=(const T &value) {
    dram(port, index, 1);
    *p = value;
    return *this;
  }
  dram_ref &operator=(const dram_ref &other) { return *this = (T)other; }
};

/* An m_axi pointer parameter in the instrumented copy: indexes like the pointer it wraps. */
template <typename T>
struct dram_ptr {
  T *base;
  long port, offset;
  dram_ptr(T *pointer) : base(pointer), port(-1), offset(0) { port = dram_port_of(pointer, sizeof(T), &offset); }
  template <typename U>  // a writable port handed on as a read-only one
  dram_ptr(const dram_ptr<U> &other) : base(other.base), port(other.port), offset(other.offset) {}
  template <typename I>
  dram_ref<T> operator[](const I &i) const {
    const long k = (long)i;
    dram_ref<T> r = {base + k, port, offset + k};
    return r;
  }
  operator T *() const { return base; }
};
}  // namespace systolic_trace


#define SYSTOLIC_TRACE_PROCESS(k) systolic_trace::process(k)
#define SYSTOLIC_TRACE_SPAWN(k, ...) systolic_trace::spawn(k, [&]() { __VA_ARGS__ })
#define SYSTOLIC_TRACE_RUN() systolic_trace::run_all()
#define SYSTOLIC_TRACE_PASS() systolic_trace::pass()
#define SYSTOLIC_TRACE_ENTER(l) systolic_trace::enter(l)
#define SYSTOLIC_TRACE_ITER(l) systolic_trace::iteration(l)
#define SYSTOLIC_TRACE_EXIT(l) systolic_trace::exit_loop(l)
#define SYSTOLIC_TRACE_FORK(g, n) systolic_trace::fork(g, n)
#define SYSTOLIC_TRACE_JOIN(g, n) systolic_trace::join(g, n)
#define SYSTOLIC_TRACE_CALL(g, m) systolic_trace::call(g, m)
#define SYSTOLIC_TRACE_RETURN() systolic_trace::ret()
#define SYSTOLIC_TRACE_VALUE(id, ready) systolic_trace::value(id, ready)
#define SYSTOLIC_TRACE_READY(id) systolic_trace::ready_of(id)
#define SYSTOLIC_TRACE_AT(ready) systolic_trace::at(ready)
#define SYSTOLIC_TRACE_DRAM_PORT(k, name) systolic_trace::dram_port(k, #name, (const void *)(name), sizeof(*(name)))
#define SYSTOLIC_TRACE_UPDATE(site, element) systolic_trace::update(site, (const void *)&(element))

#endif

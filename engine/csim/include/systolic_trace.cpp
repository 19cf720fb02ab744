/* systolic_trace.cpp - the recorder declared in systolic_trace.h (see there for the file format). */
#include "systolic_trace.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace systolic_trace {

enum Kind { LOOP = 0, STEP = 1, FORK = 2, JOIN = 3, BEGIN = 4, END = 5 };

struct Op {
  long stream, dir, count, first, last;
};

/* The bursts one (port, direction) forms in the current loop invocation. */
struct Bursts {
  long last, length;          // address of the last word, length of the burst it extends
  std::map<long, long> count; // burst length -> bursts of that length (closed ones)
};

struct Port {
  std::string name;
  const char *base;
  long word_bytes;
};

struct Thread {
  long process, parent, group, member;
  long loop;        // the pipelined nest being run, -1 outside one
  long iter;        // iterations of the current invocation so far
  long generation;  // invocation number, for recurrences
  long hint;        // index of the last op touched (ops repeat in the same order)
  std::vector<Op> ops;
  std::map<long, long> ready;  // straight-line code: value id -> cycles its operators take after the reads
  long pending;                // the ready cycle of the value the next record waits for
  std::map<long, Bursts> dram; // port * 2 + dir -> the bursts of the current invocation
};

struct Entry {
  long generation, iter, count;
};

struct Site {
  long k, d;  // tightest updates-per-iteration / distance seen, 0/1 when none
  std::unordered_map<const void *, Entry> last;
};

struct State {
  FILE *segs, *ops, *dram, *dram_log;
  std::vector<Port> ports;
  long max_burst, boundary;
  long nsegs, nops, budget, seg_bytes, op_bytes, generation, current;
  std::vector<long> stack;
  std::vector<Thread> threads;
  std::map<long, long> process_thread;
  std::map<std::pair<long, std::pair<long, long> >, long> child;  // (parent, (group, member)) -> thread
  std::vector<std::string> streams;
  std::vector<long> passes;  // first thread of each call of the dataflow region after the first
  std::map<long, Site> sites;
  std::string dir, log_path;
  State() : segs(0), ops(0), dram(0), dram_log(0), max_burst(64), boundary(4096), nsegs(0), nops(0), budget(0), seg_bytes(1), op_bytes(1), generation(0), current(-1) {
    const char *d = std::getenv("SYSTOLIC_TRACE_DIR");
    dir = d ? d : ".";
    segs = std::fopen((dir + "/segments.bin").c_str(), "wb");
    ops = std::fopen((dir + "/ops.bin").c_str(), "wb");
    dram = std::fopen((dir + "/dram.bin").c_str(), "wb");
    if (!segs || !ops || !dram) {
      std::fprintf(stderr, "ERROR: systolic trace: cannot write in %s\n", dir.c_str());
      std::exit(4);
    }
    static char segs_buffer[1 << 20], ops_buffer[1 << 20];
    std::setvbuf(segs, segs_buffer, _IOFBF, sizeof segs_buffer);
    std::setvbuf(ops, ops_buffer, _IOFBF, sizeof ops_buffer);
    const char *b = std::getenv("SYSTOLIC_TRACE_BUDGET");
    budget = b ? std::atol(b) : 0;
    const char *sb = std::getenv("SYSTOLIC_TRACE_SEG_BYTES");
    const char *ob = std::getenv("SYSTOLIC_TRACE_OP_BYTES");
    if (sb) seg_bytes = std::atol(sb);
    if (ob) op_bytes = std::atol(ob);
    const char *axi = std::getenv("SYSTOLIC_TRACE_AXI");
    if (axi) std::sscanf(axi, "%ld %ld", &max_burst, &boundary);
    const char *log = std::getenv("SYSTOLIC_TRACE_DRAM_LOG");
    if (log && *log) {
      log_path = log;
      dram_log = std::fopen(log, "wb");
      if (!dram_log) {
        std::fprintf(stderr, "ERROR: systolic trace: cannot write %s\n", log);
        std::exit(4);
      }
    }
  }
};

static State &state() {
  static State s;
  return s;
}

static long new_thread(long process, long parent, long group, long member) {
  Thread t = {process, parent, group, member, -1, 0, 0, 0, std::vector<Op>(), std::map<long, long>(), 0,
              std::map<long, Bursts>()};
  state().threads.push_back(t);
  return (long)state().threads.size() - 1;
}

static void emit(long thread, long kind, long a, long n, const Op *ops, long count, long ready = 0) {
  State &s = state();
  long reads = 0, writes = 0;
  for (long k = 0; k < count; k++) (ops[k].dir ? writes : reads)++;
  long row[8] = {thread, kind, a, n, s.nops, reads, writes, ready};
  std::fwrite(row, sizeof row, 1, s.segs);
  for (int pass = 0; pass < 2; pass++)  // reads first, then writes
    for (long k = 0; k < count; k++)
      if (ops[k].dir == pass) std::fwrite(&ops[k], sizeof(Op), 1, s.ops);
  if (kind == LOOP) {
    std::map<long, Bursts> &dram = s.threads[thread].dram;
    for (std::map<long, Bursts>::iterator it = dram.begin(); it != dram.end(); ++it) {
      if (it->second.length > 0) it->second.count[it->second.length]++;
      for (std::map<long, long>::iterator b = it->second.count.begin(); b != it->second.count.end(); ++b) {
        long burst[4] = {s.nsegs, it->first, b->first, b->second};
        std::fwrite(burst, sizeof burst, 1, s.dram);
      }
    }
    dram.clear();
  }
  s.nsegs++;
  s.nops += count;
  if (s.budget > 0 && s.nsegs * s.seg_bytes + s.nops * s.op_bytes > s.budget) {
    std::fprintf(stderr, "ERROR: systolic trace: the trace passed %ld bytes (%ld loop invocations, %ld stream "
                 "operations) before the run ended\n", s.budget, s.nsegs, s.nops);
    std::exit(5);
  }
}

static Thread &current() {
  State &s = state();
  if (s.current < 0) s.current = new_thread(-1, -1, -1, -1);  // stream use before any process
  return s.threads[s.current];
}

long register_stream(const char *name) {
  state().streams.push_back(name);
  return (long)state().streams.size() - 1;
}

void process(long index) {
  State &s = state();
  std::map<long, long>::iterator it = s.process_thread.find(index);
  s.current = it != s.process_thread.end() ? it->second : (s.process_thread[index] = new_thread(index, -1, -1, -1));
  s.stack.clear();
  s.threads[s.current].ready.clear();
  s.threads[s.current].pending = 0;
}

/* A new call of the dataflow region (a pass): its processes are new threads, replayed after every
   thread of the calls before it has finished. */
void pass() {
  State &s = state();
  if (!s.process_thread.empty()) s.passes.push_back((long)s.threads.size());
  s.process_thread.clear();
  s.child.clear();
  s.stack.clear();
  s.current = -1;
}

void enter(long loop) {
  Thread &t = current();
  // a loop after straight-line statements starts once their operators are done (the FSM's state order)
  for (std::map<long, long>::iterator it = t.ready.begin(); it != t.ready.end(); ++it)
    if (it->second > t.pending) t.pending = it->second;
  t.ready.clear();
  t.loop = loop;
  t.iter = 0;
  t.ops.clear();
  t.dram.clear();
  t.hint = 0;
  t.generation = ++state().generation;
}

void iteration(long loop) {
  Thread &t = current();
  if (t.loop != loop) enter(loop);
  current().iter++;
}

void exit_loop(long loop) {
  Thread &t = current();
  if (t.loop == loop && t.iter > 0) {
    emit(state().current, LOOP, loop, t.iter, t.ops.data(), (long)t.ops.size(), t.pending);
    t.pending = 0;
  }
  t.loop = -1;
}

void op(long stream, long dir) {
  State &s = state();
  Thread &t = current();
  if (t.loop < 0 || t.iter == 0) {
    Op o = {stream, dir, 1, 0, 0};
    emit(s.current, STEP, -1, 1, &o, 1, t.pending);
    t.pending = 0;
    if (dir == 0) t.ready.clear();  // a value read now: what is computed after it counts from here
    return;
  }
  const long at = t.iter - 1;
  const long n = (long)t.ops.size();
  for (long k = 0; k < n; k++) {
    Op &o = t.ops[(t.hint + k) % n];
    if (o.stream == stream && o.dir == dir) {
      o.count++;
      o.last = at;
      t.hint = (t.hint + k + 1) % n;
      return;
    }
  }
  Op o = {stream, dir, 1, at, at};
  t.ops.push_back(o);
}

static long child(long group, long member) {
  State &s = state();
  std::pair<long, std::pair<long, long> > key(s.current, std::make_pair(group, member));
  std::map<std::pair<long, std::pair<long, long> >, long>::iterator it = s.child.find(key);
  if (it != s.child.end()) return it->second;
  const long process = s.threads[s.current].process;
  const long parent = s.current;
  const long t = new_thread(process, parent, group, member);
  s.child[key] = t;
  return t;
}

void fork(long group, long members) {
  std::vector<Op> ops;
  for (long m = 0; m < members; m++) {
    Op o = {-(2 * child(group, m) + 1), 1, 1, 0, 0};
    ops.push_back(o);
  }
  emit(state().current, FORK, group, 1, ops.data(), members);
}

void join(long group, long members) {
  std::vector<Op> ops;
  for (long m = 0; m < members; m++) {
    Op o = {-(2 * child(group, m) + 2), 0, 1, 0, 0};
    ops.push_back(o);
  }
  emit(state().current, JOIN, group, 1, ops.data(), members);
}

void call(long group, long member) {
  State &s = state();
  const long t = child(group, member);
  s.stack.push_back(s.current);
  s.current = t;
  Op o = {-(2 * t + 1), 0, 1, 0, 0};
  emit(t, BEGIN, group, 1, &o, 1);
}

void ret() {
  State &s = state();
  Op o = {-(2 * s.current + 2), 1, 1, 0, 0};
  emit(s.current, END, s.threads[s.current].group, 1, &o, 1);
  s.current = s.stack.back();
  s.stack.pop_back();
}

void update(long site, const void *element) {
  Thread &t = current();
  Site &s = state().sites[site];
  if (s.d == 0) s.d = 1;
  Entry &e = s.last[element];
  const long at = t.iter - 1;
  if (e.generation == t.generation && e.count > 0) {
    if (e.iter == at) {
      e.count++;  // chained inside one iteration: binds only if a later iteration updates it again
      return;
    }
    const long distance = at - e.iter;
    if (e.count * s.d > s.k * distance) s.k = e.count, s.d = distance;
  }
  e.generation = t.generation;
  e.iter = at;
  e.count = 1;
}

void value(long id, long ready) { current().ready[id] = ready; }

long ready_of(long id) {
  Thread &t = current();
  std::map<long, long>::iterator it = t.ready.find(id);
  return it == t.ready.end() ? 0 : it->second;
}

void at(long ready) {
  Thread &t = current();
  if (ready > t.pending) t.pending = ready;
}

void dram_port(long port, const char *name, const void *base, long word_bytes) {
  State &s = state();
  if ((long)s.ports.size() <= port) s.ports.resize(port + 1);
  Port p = {name, (const char *)base, word_bytes};
  s.ports[port] = p;
}

/* The port a pointer lies in (the registered base at or below it) and its word offset there. */
long dram_port_of(const void *pointer, long word_bytes, long *offset) {
  State &s = state();
  const char *at = (const char *)pointer;
  long best = -1;
  for (size_t k = 0; k < s.ports.size(); k++)
    if (s.ports[k].base && s.ports[k].base <= at && (best < 0 || s.ports[k].base > s.ports[best].base))
      best = (long)k;
  *offset = best < 0 ? 0 : (long)(at - s.ports[best].base) / (word_bytes > 0 ? word_bytes : 1);
  return best;
}

void dram(long port, long index, long dir) {
  State &s = state();
  if (port < 0) return;
  Thread &t = current();
  const long channel = port * 2 + dir;
  const bool looping = t.loop >= 0 && t.iter > 0;
  if (s.dram_log) {
    long row[3] = {channel, index, looping ? t.generation : -(++s.generation)};
    std::fwrite(row, sizeof row, 1, s.dram_log);
  }
  if (!looping) return;
  const long word = s.ports[port].word_bytes > 0 ? s.ports[port].word_bytes : 1;
  const long page = s.boundary / word > 0 ? s.boundary / word : 1;
  const long cap = std::max(1L, std::min(s.max_burst, page));
  std::map<long, Bursts>::iterator it = t.dram.find(channel);
  if (it == t.dram.end()) {
    Bursts fresh;
    fresh.last = index;
    fresh.length = 1;
    t.dram[channel] = fresh;
    return;
  }
  Bursts &b = it->second;
  if (index == b.last + 1 && index % page != 0 && b.length < cap) {
    b.length++;
  } else {
    b.count[b.length]++;
    b.length = 1;
  }
  b.last = index;
}

/* -- the processes of a region call as coroutines ------------------------------------------------ */

struct Task {
  long process;
  std::function<void()> body;
  ucontext_t context;
  char *stack;
  bool started, done;
  waitable *wait;
  int dir;
  long current;              // the recorder's thread while the task is switched out
  std::vector<long> calls;   // and its stack of helper calls
};

static const size_t STACK_BYTES = 64ul << 20;  // reserved, not committed: only the pages used count
static std::vector<Task *> tasks;
static ucontext_t scheduler;
static long running = -1;

unsigned long fifo_words() {
  static unsigned long words = 0;
  if (!words) {
    const char *w = std::getenv("SYSTOLIC_TRACE_FIFO_WORDS");
    words = w && std::atol(w) > 0 ? (unsigned long)std::atol(w) : 1024;
  }
  return words;
}

void spawn(long process, std::function<void()> body) {
  Task *t = new Task();
  t->process = process;
  t->body = body;
  t->stack = 0;
  t->started = t->done = false;
  t->wait = 0;
  t->dir = 0;
  t->current = -1;
  tasks.push_back(t);
}

static void start_task() {
  Task *t = tasks[running];
  systolic_trace::process(t->process);
  t->body();
  t->done = true;
}  // returns to `scheduler` (uc_link)

bool block(waitable *stream, int dir) {
  if (running < 0) return false;
  Task *t = tasks[running];
  t->wait = stream;
  t->dir = dir;
  swapcontext(&t->context, &scheduler);
  t->wait = 0;
  return true;
}

static bool ready(const Task *t) {
  if (t->done) return false;
  if (!t->started || !t->wait) return true;
  return t->dir == 0 ? t->wait->count > 0 : t->wait->count < t->wait->limit;
}

static void resume(long k) {
  State &s = state();
  Task *t = tasks[k];
  s.current = t->current;
  s.stack.swap(t->calls);
  running = k;
  if (!t->started) {
    t->started = true;
    t->stack = (char *)mmap(0, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t->stack == (char *)MAP_FAILED) {
      std::fprintf(stderr, "ERROR: systolic trace: cannot reserve a stack for process %ld\n", t->process);
      std::exit(4);
    }
    mprotect(t->stack, 4096, PROT_NONE);  // an overflow faults instead of corrupting a neighbour
    getcontext(&t->context);
    t->context.uc_stack.ss_sp = t->stack;
    t->context.uc_stack.ss_size = STACK_BYTES;
    t->context.uc_link = &scheduler;
    makecontext(&t->context, start_task, 0);
  }
  swapcontext(&scheduler, &t->context);
  running = -1;
  t->current = s.current;
  s.stack.swap(t->calls);
  s.stack.clear();
}

void run_all() {
  const long n = (long)tasks.size();
  long next = 0, finished = 0;
  while (finished < n) {
    long k = -1;
    for (long step = 0; step < n; step++) {
      const long j = (next + step) % n;
      if (ready(tasks[j])) {
        k = j;
        break;
      }
    }
    if (k < 0) {  // every unfinished process waits: a writer's FIFO is deeper than the limit, or a deadlock
      for (long j = 0; j < n && k < 0; j++)
        if (!tasks[j]->done && tasks[j]->wait && tasks[j]->dir == 1) k = j;
      if (k < 0) {
        for (long j = 0; j < n; j++)
          if (!tasks[j]->done && tasks[j]->wait) {
            std::fprintf(stderr, "ERROR: hls::stream '%s' read while empty\n", tasks[j]->wait->wait_name);
            std::exit(3);
          }
        break;
      }
      tasks[k]->wait->limit *= 2;
    }
    resume(k);
    if (tasks[k]->done) {
      finished++;
      munmap(tasks[k]->stack, STACK_BYTES);
      tasks[k]->stack = 0;
    }
    next = k + 1;
  }
  for (size_t j = 0; j < tasks.size(); j++) delete tasks[j];
  tasks.clear();
  state().current = -1;
}

/* Called by the harness after kernel0 returns: flush the records, name the ids. */
void finish() {
  State &s = state();
  std::fclose(s.segs);
  std::fclose(s.ops);
  std::fclose(s.dram);
  if (s.dram_log) std::fclose(s.dram_log);
  for (int copy = 0; copy < (s.dram_log ? 2 : 1); copy++) {  // the log's own copy names its ports too
    FILE *pf = std::fopen(copy ? (s.log_path + ".ports.tsv").c_str() : (s.dir + "/ports.tsv").c_str(), "w");
    for (size_t k = 0; k < s.ports.size(); k++)
      std::fprintf(pf, "%lu\t%s\t%ld\n", (unsigned long)k, s.ports[k].name.c_str(), s.ports[k].word_bytes);
    std::fclose(pf);
  }
  FILE *f = std::fopen((s.dir + "/streams.tsv").c_str(), "w");
  for (size_t k = 0; k < s.streams.size(); k++) std::fprintf(f, "%lu\t%s\n", (unsigned long)k, s.streams[k].c_str());
  std::fclose(f);
  f = std::fopen((s.dir + "/threads.tsv").c_str(), "w");
  for (size_t k = 0; k < s.threads.size(); k++)
    std::fprintf(f, "%lu\t%ld\t%ld\t%ld\t%ld\n", (unsigned long)k, s.threads[k].process, s.threads[k].parent,
                 s.threads[k].group, s.threads[k].member);
  std::fclose(f);
  f = std::fopen((s.dir + "/passes.tsv").c_str(), "w");
  for (size_t k = 0; k < s.passes.size(); k++) std::fprintf(f, "%ld\n", s.passes[k]);
  std::fclose(f);
  f = std::fopen((s.dir + "/sites.tsv").c_str(), "w");
  for (std::map<long, Site>::iterator it = s.sites.begin(); it != s.sites.end(); ++it)
    std::fprintf(f, "%ld\t%ld\t%ld\n", it->first, it->second.k, it->second.d);
  std::fclose(f);
}

}  // namespace systolic_trace

/*
 * mm.c - dense matrix multiplication (the MM benchmark of AutoSA / Odyssey):
 *     C[i][j] = sum_k A[i][k] * B[k][j],   A: I x K, B: K x J, C: I x J.
 * Default sizes are the papers' (I = J = K = 1024, float). Sizes and element
 * type can be overridden with -D, e.g. `-D I=64 -D J=64 -D K=64 -D DATA_T=int16_t`.
 * Build and self-check: gcc -O2 -std=c99 mm.c -o mm && ./mm   (prints PASS)
 */
#include <stdio.h>
#include <stdint.h>

#ifndef I
#define I 1024
#endif
#ifndef J
#define J 1024
#endif
#ifndef K
#define K 1024
#endif

#ifndef DATA_T
#define DATA_T float
#endif
typedef DATA_T data_t;

data_t A[I][K];
data_t B[K][J];
data_t C[I][J];
data_t C_ref[I][J];

/* The scop / endscop pragmas below delimit the static control part read by
 * the polyhedral front end; C compilers do not know them, so keep -Wall quiet. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

void kernel(void)
{
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      C[i][j] = 0;
      for (int k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
#pragma endscop
}

/* Integer element types are compared exactly (kernel and reference wrap the
 * same way on overflow); floating-point types with a relative tolerance. */
static int mismatch(double expected, double got)
{
  double diff = expected - got;
  double mag = expected < 0 ? -expected : expected;
  if ((data_t)0.5 == (data_t)0)
    return expected != got;
  if (diff < 0)
    diff = -diff;
  return diff > 1e-3 * mag + 1e-6;
}

int main(void)
{
  for (int i = 0; i < I; i++)
    for (int k = 0; k < K; k++)
      A[i][k] = (data_t)(((i * 7 + k * 3) % 5) - 2);
  for (int k = 0; k < K; k++)
    for (int j = 0; j < J; j++)
      B[k][j] = (data_t)(((k * 3 + j * 2 + 1) % 5) - 2);
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      C[i][j] = (data_t)99; /* garbage: the kernel must initialise C */

  kernel();

  /* golden reference */
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      data_t acc = 0;
      for (int k = 0; k < K; k++)
        acc += A[i][k] * B[k][j];
      C_ref[i][j] = acc;
    }

  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      if (mismatch((double)C_ref[i][j], (double)C[i][j])) {
        printf("FAIL at [%d][%d]: expected %g got %g\n", i, j,
               (double)C_ref[i][j], (double)C[i][j]);
        return 1;
      }
  printf("PASS\n");
  return 0;
}

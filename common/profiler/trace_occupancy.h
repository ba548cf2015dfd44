/* trace_occupancy.h: CUDA's occupancy calculator for the trace (trace_occupancy.cu). */
#ifndef TRACE_OCCUPANCY_H
#define TRACE_OCCUPANCY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of a kernel with these resources that one SM of `device` holds, as torch.profiler's
 * Kineto asks the calculator; -1 when the calculator or the device query fails. */
int trace_occupancy_blocks_per_sm(int device, int registers_per_thread, int static_shared,
                                  int dynamic_shared, int block_threads);

#ifdef __cplusplus
}
#endif

#endif

// prof_gate.cu: the gate kernel that holds a stream until the CPU has issued a whole step.
#include <cuda_runtime.h>

// Spins until the host writes a non-zero release flag (host-mapped memory), so the work queued
// behind it starts back to back. Gives up after timeout_ns (reporting it) rather than hang if
// something inside the step waits for the GPU to go idle.
extern "C" __global__ void step_gate_wait(const volatile int *release, int *timed_out,
                                          unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*release == 0) {
        __nanosleep(500);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *timed_out = 1;
            return;
        }
    }
}

extern "C" void launch_step_gate(const volatile int *release, int *timed_out, cudaStream_t stream)
{
    step_gate_wait<<<1, 1, 0, stream>>>(release, timed_out, 200ull * 1000 * 1000);
}

/* The binary interface between tilefuse's runtime and the kernel libraries it generates.
 * C-compatible on purpose: a generated library exports these symbols with C linkage, and a person
 * can call them from a hand-written benchmark.
 *
 * A kernel does not create threads. It splits its iteration space into blocks; the runtime's
 * thread team calls tf_run_blocks on disjoint block ranges, each worker with its own scratch. */
#ifndef TILEFUSE_KERNEL_ABI_H
#define TILEFUSE_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#define TILEFUSE_KERNEL_ABI_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

/* Returns TILEFUSE_KERNEL_ABI_VERSION of the header the library was compiled with. */
typedef int (*tf_abi_version_fn)(void);
/* Number of blocks for the given symbol values (array in the order the kernel's metadata lists
 * its symbols; may be NULL for a kernel without symbols) when `workers` threads run it. A static
 * kernel's tiling is baked in and ignores `workers`; a jit kernel splits its work at launch. */
typedef int64_t (*tf_num_blocks_fn)(const int64_t* symbols, int64_t workers);
/* Bytes of per-worker scratch the kernel needs (64-byte aligned by the caller). A kernel that
 * gathers (its plan lists gathers) keeps its first 64 bytes for an index out of range: two
 * int64s, the gather's number from 1 and the index, which the caller zeroes before a run and
 * reads after it. */
typedef size_t (*tf_scratch_bytes_fn)(const int64_t* symbols);
/* Runs blocks [first_block, end_block) of the split tf_num_blocks(symbols, workers) made.
 * `buffers` holds the kernel's inputs then its outputs, in the order of its metadata. */
typedef void (*tf_run_blocks_fn)(void* const* buffers, const int64_t* symbols, int64_t workers,
                                 int64_t first_block, int64_t end_block, void* scratch);

/* A model package's library (model.so in a model.tfx, written by `tilefuse compile`) holds every
 * kernel of the model, each under names of its own, and lists them by plan step through
 * tf_package_kernels. */
typedef struct tf_package_kernel {
  int64_t step;           /* the plan step that launches it */
  const char* name;       /* the kernel's name in the plan */
  const char* kernel_key; /* the tuned candidate it is (its cache entry), or "jit" */
  tf_num_blocks_fn num_blocks;
  tf_scratch_bytes_fn scratch_bytes;
  tf_run_blocks_fn run_blocks;
} tf_package_kernel;
/* The kernels, in step order; `count` receives their number. */
typedef const tf_package_kernel* (*tf_package_kernels_fn)(size_t* count);

#ifdef __cplusplus
}
#endif

#define TILEFUSE_SYMBOL_PACKAGE_KERNELS "tf_package_kernels"
#define TILEFUSE_SYMBOL_ABI_VERSION "tf_abi_version"
#define TILEFUSE_SYMBOL_NUM_BLOCKS "tf_num_blocks"
#define TILEFUSE_SYMBOL_SCRATCH_BYTES "tf_scratch_bytes"
#define TILEFUSE_SYMBOL_RUN_BLOCKS "tf_run_blocks"

#endif /* TILEFUSE_KERNEL_ABI_H */

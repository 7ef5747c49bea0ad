// The process's memory cap: TILEFUSE_MAX_MEMORY, or `--max-memory` / ExecutionOptions, and by
// default the machine's physical memory. Every tensor, arena and scratch buffer reserves its
// bytes here before it is allocated and returns them when freed, so a small model that asks for
// a terabyte fails with an error naming what it wanted, instead of being killed by the kernel's
// OOM killer half way through.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tilefuse {

// "1073741824", "512M", "8G", "1.5GiB", "2T": a byte count with an optional binary suffix
// (K/M/G/T, with or without "iB"/"B"). Throws UserError naming `source` and the rule otherwise.
size_t parse_memory_size(std::string_view text, std::string_view source);

// The cap in bytes: set_max_memory's value, else TILEFUSE_MAX_MEMORY (read once), else physical
// memory.
size_t max_memory();
void set_max_memory(size_t bytes);

// Bytes reserved now by live allocations.
size_t reserved_memory();

// Reserves `bytes` for `what` ("tensor f32[4, 4]", "the tensor arena"), or throws UserError
// saying how much was asked, how much is left and how to raise the cap.
void reserve_memory(size_t bytes, std::string_view what);
// reserve_memory without a message: false (and nothing reserved) where it would throw.
bool try_reserve_memory(size_t bytes);
void release_memory(size_t bytes);
// Whether `bytes` would fit now.
bool memory_available(size_t bytes);

// Throws like reserve_memory if `bytes` would not fit now, reserving nothing: for a check before
// reading a large file whose bytes will be reserved by the tensor made of them.
void require_memory(size_t bytes, std::string_view what);

}  // namespace tilefuse

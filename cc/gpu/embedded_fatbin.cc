// The nvcc-compiled kernels (similarity_warp_kernels.cu), embedded in the
// binary by the assembler so that they can be loaded with cuModuleLoadData
// without a file next to the program. The build defines TFG_FATBIN_PATH.
#include "cc/gpu/embedded_fatbin.h"

#ifndef TFG_FATBIN_PATH
#error "TFG_FATBIN_PATH must name the fatbin built by nvcc"
#endif

// A fatbin must start 8-byte aligned; 64 keeps it on its own cache line.
asm(".section .rodata\n"
    ".balign 64\n"
    ".global tfg_similarity_warp_fatbin\n"
    "tfg_similarity_warp_fatbin:\n"
    ".incbin \"" TFG_FATBIN_PATH "\"\n"
    ".global tfg_similarity_warp_fatbin_end\n"
    "tfg_similarity_warp_fatbin_end:\n"
    ".previous\n");

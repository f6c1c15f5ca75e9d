// The embedded fatbin's symbols (embedded_fatbin.h) for the tests against a
// fake CUDA driver: they build their own decoders and launchers over a fake
// fatbin, and what reads the embedded one (the process-wide Get()s, the
// KernelModules::Embedded loader) finds none.
#include "cc/gpu/embedded_fatbin.h"

extern "C" const unsigned char tfg_similarity_warp_fatbin[] = {0};
extern "C" const unsigned char tfg_similarity_warp_fatbin_end[] = {0};

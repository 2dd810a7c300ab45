#include "heap.h"

#include <stdlib.h>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void orchestrate_map_large_blocks(int bytes) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
    mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}

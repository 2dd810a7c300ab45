#ifndef ORCHESTRATE_HEAP_H
#define ORCHESTRATE_HEAP_H

/// Makes blocks of `bytes` or more be mapped and unmapped on their own (glibc's M_MMAP_THRESHOLD, which then stays
/// where it is put). Without it glibc raises the threshold to the size of the first large block freed, and later ones
/// stay in the heaps of the threads that used them: a burst of large bodies would stay resident after it was let go.
/// Does nothing where the C library has no such setting.
void orchestrate_map_large_blocks(int bytes);

#endif

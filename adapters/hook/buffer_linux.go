package hook

import "golang.org/x/sys/unix"

// bigBuffer returns an empty buffer of capacity n for a payload past the
// first read: memory mapped apart from the Go heap and advised to be backed
// by huge pages, so that filling it costs a fault per 2 MiB rather than per
// 4 KiB. On a loaded machine those faults, not the copying, are what
// reading a 16 MiB payload costs (about ten times the time). The memory is
// backed only as it fills, and lives until the process exits (a hook reads
// one payload). nil when the mapping fails (the caller grows a slice).
func bigBuffer(n int) []byte {
	size := (n + hugePage - 1) / hugePage * hugePage
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: without it, plain pages
	return b[:0:n]
}

const hugePage = 2 << 20

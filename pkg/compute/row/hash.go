package row

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Hash returns the FNV-1a 64-bit hash of b. It is a fixed function of the
// bytes, identical in every process and on every run, which the exchange
// between workers of different processes relies on (it must never be a
// seeded hash such as hash/maphash). Because the row encoding is
// canonical, equal tuples hash equally.
func Hash(b []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

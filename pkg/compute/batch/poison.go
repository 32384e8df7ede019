package batch

import "sync"

// maxQuarantined bounds the poisoned arenas kept reserved at once. Each is
// a mapping of its own, and a process may hold only so many (Linux's
// vm.max_map_count, 65,530 by default, shared with the Go runtime's own
// mappings); past the bound the oldest is unmapped for real, so only a
// read of an arena released that long ago could miss its fault.
const maxQuarantined = 16 << 10

// quarantined is the FIFO of poisoned arenas' memory still reserved: the
// process-wide debug state of SetPoison, like mapped.
var quarantined struct {
	sync.Mutex
	mems [][]byte
}

// quarantine makes a released arena's memory inaccessible (protectNone)
// and keeps its addresses reserved, so no later mapping can take them and
// a read through a slice kept past the batch faults, whenever it comes.
func quarantine(mem []byte) {
	if !protectNone(mem) {
		unmapMemory(mem)
		return
	}
	quarantined.Lock()
	defer quarantined.Unlock()
	quarantined.mems = append(quarantined.mems, mem)
	if len(quarantined.mems) > maxQuarantined {
		unmapMemory(quarantined.mems[0])
		quarantined.mems[0] = nil
		quarantined.mems = quarantined.mems[1:]
	}
}

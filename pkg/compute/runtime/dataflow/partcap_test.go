package dataflow

import (
	"fmt"
	"testing"
)

// TestExchangePartsDoNotGrow: a payload exchanged to W*P workers is split
// into parts sized for the hashed share; over 200 payloads of 16,384
// updates with well-mixed keys no part outgrows its initial capacity (with
// the even share plus 16, about half of them did, each copied whole).
func TestExchangePartsDoNotGrow(t *testing.T) {
	mix := func(x uint64) uint64 { // splitmix64
		x += 0x9e3779b97f4a7c15
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		x = (x ^ (x >> 27)) * 0x94d049bb133111eb
		return x ^ (x >> 31)
	}
	for _, peers := range []int{2, 3, 4, 8} {
		t.Run(fmt.Sprintf("peers=%d", peers), func(t *testing.T) {
			const n, payloads = 16_384, 200
			capacity := partCap(n, peers)
			grew := 0
			key := uint64(0)
			for range payloads {
				counts := make([]int, peers)
				for range n {
					key++
					counts[mix(key)%uint64(peers)]++
				}
				for _, c := range counts {
					if c > capacity {
						grew++
					}
				}
			}
			if grew > 0 {
				t.Errorf("%d of %d parts outgrew their capacity %d", grew, payloads*peers, capacity)
			}
			if capacity > n/peers+n/peers/8 {
				t.Errorf("capacity %d is more than 1/8 over the even share %d", capacity, n/peers)
			}
		})
	}
}

package peeklane

import (
	"bufio"
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// FuzzReadFrame feeds arbitrary bytes to the lane's frame reader, as a
// peer could send them: it returns an error or a message, never panics,
// never allocates past MaxFrame, and a frame it accepts encodes back to a
// frame that decodes to the same message.
func FuzzReadFrame(f *testing.F) {
	peek := &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: "u"}}}
	ok, err := appendFrame(nil, peek)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ok)
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{0, 0, 0, 3, 0x0a, 0x05})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m computepb.Command
		if _, err := readFrame(bufio.NewReader(bytes.NewReader(data)), nil, &m); err != nil {
			return
		}
		again, err := appendFrame(nil, &m)
		if err != nil {
			t.Fatalf("a decoded frame does not encode: %v", err)
		}
		var back computepb.Command
		if _, err := readFrame(bufio.NewReader(bytes.NewReader(again)), nil, &back); err != nil {
			t.Fatalf("an encoded frame does not decode: %v", err)
		}
		if !proto.Equal(&m, &back) {
			t.Fatalf("round trip changed the message: %v, then %v", &m, &back)
		}
	})
}

package storage

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/storage/storagepb"
)

// maxChunkBytes bounds the row bytes of one ListenResponse, well below
// gRPC's default 4 MiB message limit.
const maxChunkBytes = 1 << 20

// Service serves a Store over gRPC.
type Service struct {
	storagepb.UnimplementedStorageServer
	store *Store
}

// NewService returns the gRPC service of st.
func NewService(st *Store) *Service { return &Service{store: st} }

// Register adds the service to a gRPC server.
func (s *Service) Register(srv *grpc.Server) { storagepb.RegisterStorageServer(srv, s) }

// Listen implements storagepb.StorageServer.
func (s *Service) Listen(req *storagepb.ListenRequest, stream grpc.ServerStreamingServer[storagepb.ListenResponse]) error {
	err := s.store.Listen(stream.Context(), req.GetShard(), frontier.Time(req.GetAsOf()), func(p Progress) error {
		return sendChunked(stream, p)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnknownShard):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrCompacted):
		return status.Error(codes.OutOfRange, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	default:
		return status.Error(codes.Unavailable, err.Error())
	}
}

func sendChunked(stream grpc.ServerStreamingServer[storagepb.ListenResponse], p Progress) error {
	resp := &storagepb.ListenResponse{}
	size := 0
	for _, u := range p.Updates {
		if size > 0 && size+len(u.Row) > maxChunkBytes {
			resp.More = true
			if err := stream.Send(resp); err != nil {
				return err
			}
			resp, size = &storagepb.ListenResponse{}, 0
		}
		resp.Updates = append(resp.Updates, &storagepb.Update{Row: u.Row, Time: uint64(u.Time), Diff: u.Diff})
		size += len(u.Row) + 16
	}
	if t, ok := p.Upper.Time(); ok {
		resp.Upper = uint64(t)
	} else {
		resp.UpperClosed = true
	}
	return stream.Send(resp)
}

// Client reads shards from a storage service.
type Client struct {
	c storagepb.StorageClient
}

// NewClient returns a client over an established connection.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{c: storagepb.NewStorageClient(conn)}
}

// Listen streams a shard from asOf, calling f once per upper advance (chunks
// reassembled), until the shard is dropped (nil), ctx ends, or f fails.
func (c *Client) Listen(ctx context.Context, shard string, asOf frontier.Time, f func(Progress) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.c.Listen(ctx, &storagepb.ListenRequest{Shard: shard, AsOf: uint64(asOf)})
	if err != nil {
		return fmt.Errorf("listen to %s: %w", shard, err)
	}
	var pending []Update
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("listen to %s: stream ended before the shard closed", shard)
		}
		if err != nil {
			return fmt.Errorf("listen to %s: %w", shard, err)
		}
		for _, u := range resp.GetUpdates() {
			pending = append(pending, Update{Row: u.GetRow(), Time: frontier.Time(u.GetTime()), Diff: u.GetDiff()})
		}
		if resp.GetMore() {
			continue
		}
		p := Progress{Updates: pending, Upper: frontier.At(frontier.Time(resp.GetUpper()))}
		if resp.GetUpperClosed() {
			p.Upper = frontier.Closed()
		}
		pending = nil
		if err := f(p); err != nil {
			return err
		}
		if p.Upper.IsClosed() {
			return nil
		}
	}
}

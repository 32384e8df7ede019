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

// CompareAndAppend implements storagepb.StorageServer.
func (s *Service) CompareAndAppend(stream grpc.ClientStreamingServer[storagepb.AppendRequest, storagepb.AppendResponse]) error {
	var updates []Update
	for {
		req, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return status.Error(codes.InvalidArgument, "append stream ended before its last chunk")
			}
			return err
		}
		for _, u := range req.GetUpdates() {
			updates = append(updates, Update{Row: u.GetRow(), Time: frontier.Time(u.GetTime()), Diff: u.GetDiff()})
		}
		if req.GetMore() {
			continue
		}
		err = s.store.CompareAndAppend(stream.Context(), req.GetShard(), frontier.Time(req.GetExpectedUpper()), frontier.Time(req.GetNewUpper()), updates)
		var mismatch *UpperMismatchError
		switch {
		case err == nil:
			return stream.SendAndClose(&storagepb.AppendResponse{Applied: true, CurrentUpper: req.GetNewUpper()})
		case errors.As(err, &mismatch):
			resp := &storagepb.AppendResponse{}
			if t, ok := mismatch.Current.Time(); ok {
				resp.CurrentUpper = uint64(t)
			} else {
				resp.CurrentUpperClosed = true
			}
			return stream.SendAndClose(resp)
		case errors.Is(err, ErrDropped):
			return stream.SendAndClose(&storagepb.AppendResponse{CurrentUpperClosed: true})
		}
		return storageStatus(err)
	}
}

// ReadFrom implements storagepb.StorageServer.
func (s *Service) ReadFrom(req *storagepb.ReadRequest, stream grpc.ServerStreamingServer[storagepb.ReadResponse]) error {
	updates, upper, since, full, err := s.store.ReadFrom(stream.Context(), req.GetShard(), frontier.Time(req.GetFrom()))
	if err != nil {
		return storageStatus(err)
	}
	resp := &storagepb.ReadResponse{}
	size := 0
	for _, u := range updates {
		if size > 0 && size+len(u.Row) > maxChunkBytes {
			resp.More = true
			if err := stream.Send(resp); err != nil {
				return err
			}
			resp, size = &storagepb.ReadResponse{}, 0
		}
		resp.Updates = append(resp.Updates, &storagepb.Update{Row: u.Row, Time: uint64(u.Time), Diff: u.Diff})
		size += len(u.Row) + 16
	}
	if t, ok := upper.Time(); ok {
		resp.Upper = uint64(t)
	} else {
		resp.UpperClosed = true
	}
	resp.Since, resp.Full = uint64(since), full
	return stream.Send(resp)
}

// storageStatus maps a store error to a gRPC status.
func storageStatus(err error) error {
	switch {
	case errors.Is(err, ErrUnknownShard):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrNotSink):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Unavailable, err.Error())
}

// CompareAndAppend writes updates to a sink shard through the service,
// moving its upper from expected to upper. It returns an
// *UpperMismatchError when another writer moved the upper first, and
// ErrDropped (wrapped) when the shard is gone.
func (c *Client) CompareAndAppend(ctx context.Context, shard string, expected, upper frontier.Time, updates []Update) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.c.CompareAndAppend(ctx)
	if err != nil {
		return fmt.Errorf("append to %s: %w", shard, err)
	}
	req := &storagepb.AppendRequest{Shard: shard}
	size := 0
	for _, u := range updates {
		if size > 0 && size+len(u.Row) > maxChunkBytes {
			req.More = true
			if err := stream.Send(req); err != nil {
				return fmt.Errorf("append to %s: %w", shard, err)
			}
			req, size = &storagepb.AppendRequest{Shard: shard}, 0
		}
		req.Updates = append(req.Updates, &storagepb.Update{Row: u.Row, Time: uint64(u.Time), Diff: u.Diff})
		size += len(u.Row) + 16
	}
	req.ExpectedUpper, req.NewUpper = uint64(expected), uint64(upper)
	if err := stream.Send(req); err != nil {
		return fmt.Errorf("append to %s: %w", shard, err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return fmt.Errorf("append to %s: %w", shard, clientError(err))
	}
	switch {
	case resp.GetApplied():
		return nil
	case resp.GetCurrentUpperClosed():
		return fmt.Errorf("append to %s: %w", shard, ErrDropped)
	}
	return &UpperMismatchError{Shard: shard, Expected: expected, Current: frontier.At(frontier.Time(resp.GetCurrentUpper()))}
}

// ReadFrom reads a shard's updates at times >= from through the service;
// see Store.ReadFrom.
func (c *Client) ReadFrom(ctx context.Context, shard string, from frontier.Time) (updates []Update, upper frontier.Frontier, since frontier.Time, full bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.c.ReadFrom(ctx, &storagepb.ReadRequest{Shard: shard, From: uint64(from)})
	if err != nil {
		return nil, frontier.Frontier{}, 0, false, fmt.Errorf("read %s: %w", shard, err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return nil, frontier.Frontier{}, 0, false, fmt.Errorf("read %s: %w", shard, clientError(err))
		}
		for _, u := range resp.GetUpdates() {
			updates = append(updates, Update{Row: u.GetRow(), Time: frontier.Time(u.GetTime()), Diff: u.GetDiff()})
		}
		if resp.GetMore() {
			continue
		}
		upper = frontier.At(frontier.Time(resp.GetUpper()))
		if resp.GetUpperClosed() {
			upper = frontier.Closed()
		}
		return updates, upper, frontier.Time(resp.GetSince()), resp.GetFull(), nil
	}
}

// clientError maps the service's status codes back to the store's
// sentinel errors, so callers test them with errors.Is on either side.
func clientError(err error) error {
	switch status.Code(err) {
	case codes.NotFound:
		return fmt.Errorf("%w (%v)", ErrUnknownShard, err)
	case codes.FailedPrecondition:
		return fmt.Errorf("%w (%v)", ErrNotSink, err)
	}
	return err
}

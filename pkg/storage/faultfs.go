package storage

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// ErrCrashed is returned by every mutating operation of a FaultFS after
// its simulated crash.
var ErrCrashed = errors.New("fault fs: crashed (simulated power loss)")

// FaultFS wraps an FS and injects faults, for tests and the chaos suite:
//
//   - a full disk: LimitSpace lets n more bytes be written, then writes (or,
//     as with delayed allocation, fsyncs) fail with ENOSPC until the limit
//     is lifted;
//   - a crash: CrashAfterBytes or CrashAfterOps stops the file system at a
//     point, as a power loss would: a write is cut at that byte (the file
//     keeps the prefix) and every later mutating operation fails with
//     ErrCrashed. Reopen the directory through another FS to recover.
//
// Mutating operations are writes, fsyncs, truncations, renames, removals,
// directory fsyncs and creations. It is safe for concurrent use.
type FaultFS struct {
	base FS

	mu          sync.Mutex
	space       int64 // bytes that may still be written; negative: unlimited
	spaceAtSync bool
	crashBytes  int64 // bytes until the crash; negative: none
	crashOps    int64 // mutating operations until the crash; negative: none
	crashed     bool
	written     int64
	ops         int64
}

// NewFaultFS returns a FaultFS over base (nil: the operating system) that
// injects nothing until told to.
func NewFaultFS(base FS) *FaultFS {
	if base == nil {
		base = OSFS{}
	}
	return &FaultFS{base: base, space: -1, crashBytes: -1, crashOps: -1}
}

// LimitSpace lets n more bytes be written (negative: no limit). A write
// past the limit writes what fits and fails with ENOSPC; with atSync it is
// written whole and the next fsync of that file fails with ENOSPC instead,
// until the file is truncated or the limit lifted.
func (f *FaultFS) LimitSpace(n int64, atSync bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.space, f.spaceAtSync = n, atSync
}

// CrashAfterBytes crashes the file system once n more bytes are written
// (negative: never).
func (f *FaultFS) CrashAfterBytes(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashBytes = n
}

// CrashAfterOps crashes the file system before the mutating operation
// after the next n (negative: never).
func (f *FaultFS) CrashAfterOps(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashOps = n
}

// Crashed reports whether the simulated crash happened.
func (f *FaultFS) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// Counts returns the bytes written and mutating operations done so far.
func (f *FaultFS) Counts() (bytes, ops int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.written, f.ops
}

// op admits one mutating operation.
func (f *FaultFS) op() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opLocked()
}

func (f *FaultFS) opLocked() error {
	if f.crashed {
		return ErrCrashed
	}
	if f.crashOps == 0 {
		f.crashed = true
		return ErrCrashed
	}
	if f.crashOps > 0 {
		f.crashOps--
	}
	f.ops++
	return nil
}

// admitWrite decides how much of a k-byte write happens and what it then
// returns; overflow says the file now holds bytes past a sync-time limit.
func (f *FaultFS) admitWrite(k int) (n int, overflow bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.opLocked(); err != nil {
		return 0, false, err
	}
	n = k
	if f.crashBytes >= 0 && int64(n) > f.crashBytes {
		n, err = int(f.crashBytes), ErrCrashed
		f.crashed = true
	}
	if f.space >= 0 && int64(n) > f.space {
		if f.spaceAtSync {
			overflow = true
		} else {
			n, err = int(f.space), syscall.ENOSPC
		}
	}
	if f.crashBytes >= 0 {
		f.crashBytes -= int64(n)
	}
	if f.space >= 0 {
		f.space = max(0, f.space-int64(n))
	}
	f.written += int64(n)
	return n, overflow, err
}

func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		if err := f.op(); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	file, err := f.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.op(); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return f.base.Rename(oldpath, newpath)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.op(); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return f.base.Remove(name)
}

func (f *FaultFS) MkdirAll(path string, perm fs.FileMode) error {
	if err := f.op(); err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return f.base.MkdirAll(path, perm)
}

func (f *FaultFS) ReadDir(name string) ([]fs.DirEntry, error) { return f.base.ReadDir(name) }

func (f *FaultFS) SyncDir(dir string) error {
	if err := f.op(); err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return f.base.SyncDir(dir)
}

// faultFile is a File of a FaultFS.
type faultFile struct {
	File
	fs   *FaultFS
	name string

	mu       sync.Mutex
	overflow bool // holds bytes written past a sync-time space limit
}

func (f *faultFile) Write(p []byte) (int, error) {
	n, overflow, err := f.fs.admitWrite(len(p))
	if n > 0 {
		m, werr := f.File.Write(p[:n])
		if werr != nil {
			return m, werr
		}
	}
	if overflow {
		f.mu.Lock()
		f.overflow = true
		f.mu.Unlock()
	}
	if err != nil {
		return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	return n, nil
}

func (f *faultFile) Sync() error {
	if err := f.fs.op(); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	f.mu.Lock()
	overflow := f.overflow
	f.mu.Unlock()
	if overflow && f.fs.spaceLimited() {
		return &fs.PathError{Op: "sync", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.op(); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	f.mu.Lock()
	f.overflow = false
	f.mu.Unlock()
	return f.File.Truncate(size)
}

// spaceLimited reports whether a space limit is in force.
func (f *FaultFS) spaceLimited() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.space >= 0
}

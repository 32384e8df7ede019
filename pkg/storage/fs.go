package storage

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FS is the file system the store writes through: the operating system by
// default (Options.FS nil), a FaultFS in tests and the chaos suite. It is
// the whole of what the store needs, so a fault layer sees every write.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(path string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
}

// File is an open file of an FS; *os.File implements it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Seeker
	io.Closer
	Sync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

// OSFS is the operating system's file system.
type OSFS struct{}

func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		// A nil *os.File in a File interface would not compare equal to nil.
		return nil, err
	}
	return f, nil
}

func (OSFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (OSFS) Remove(name string) error                     { return os.Remove(name) }
func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (OSFS) SyncDir(dir string) error                     { return syncOSDir(dir) }

func syncOSDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readFile reads a whole file through fsys; a missing file is
// fs.ErrNotExist.
func readFile(fsys FS, path string) ([]byte, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeFileSync replaces path atomically and durably with data: a temporary
// file, fsynced, renamed over path, and the directory fsynced so the rename
// itself survives a crash.
func writeFileSync(fsys FS, path string, data []byte) error {
	_, err := replaceFile(fsys, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return err
}

// replaceFile is writeFileSync for contents written by fill. replaced says
// whether path was renamed over (the error, if any, is then the directory
// fsync's): a caller holding the old file open must stop using it.
func replaceFile(fsys FS, path string, fill func(io.Writer) error) (replaced bool, err error) {
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return false, err
	}
	if err := fill(f); err != nil {
		f.Close()
		fsys.Remove(tmp)
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fsys.Remove(tmp)
		return false, err
	}
	if err := f.Close(); err != nil {
		fsys.Remove(tmp)
		return false, err
	}
	if err := fsys.Rename(tmp, path); err != nil {
		fsys.Remove(tmp)
		return false, err
	}
	return true, fsys.SyncDir(filepath.Dir(path))
}

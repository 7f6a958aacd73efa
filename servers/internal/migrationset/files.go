package migrationset

import (
	"bytes"
	"cmp"
	"io"
	"io/fs"
	"slices"
	"time"
)

// files is a built set: read-only files at the root of a file system, by
// name (the binary keeps no testing package for fstest.MapFS).
type files map[string][]byte

func (f files) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		entries, _ := f.ReadDir(".")
		return &dir{entries: entries}, nil
	}
	data, ok := f[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &file{Reader: bytes.NewReader(data), info: info{name: name, size: int64(len(data))}}, nil
}

// ReadDir lists the root, by name; there is no other directory.
func (f files) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	var out []fs.DirEntry
	for n, data := range f {
		out = append(out, fs.FileInfoToDirEntry(info{name: n, size: int64(len(data))}))
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return cmp.Compare(a.Name(), b.Name()) })
	return out, nil
}

// ReadFile returns a copy of the file's bytes.
func (f files) ReadFile(name string) ([]byte, error) {
	data, ok := f[name]
	if !ok || !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(data), nil
}

// info describes a file of the set, or its root (dir).
type info struct {
	name string
	size int64
	dir  bool
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// file is an open file of the set.
type file struct {
	*bytes.Reader
	info info
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dir is the open root.
type dir struct {
	entries []fs.DirEntry
	read    int
}

func (d *dir) Stat() (fs.FileInfo, error) { return info{name: ".", dir: true}, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: fs.ErrInvalid}
}

// ReadDir reads the next n entries (all that are left when n <= 0).
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	left := d.entries[d.read:]
	if n <= 0 {
		d.read = len(d.entries)
		return left, nil
	}
	if len(left) == 0 {
		return nil, io.EOF
	}
	left = left[:min(n, len(left))]
	d.read += len(left)
	return left, nil
}

package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
)

// CopyDir makes dst a copy of the directory src that shares no file with
// it: `cp -R --reflink=auto`, so a filesystem that can clone blocks
// (btrfs, XFS) does so copy-on-write, and any other gets a plain copy.
// Never hard links: two Pebble stores must never share a file, or one
// server's compaction would change the other's data. dst may be missing
// or an existing directory (then src's contents go into it). Needs GNU cp.
//
// The copy is on disk when CopyDir returns (`sync -f`, the filesystem's
// syncfs): otherwise the kernel writes a gigabyte of a filled store back
// some 30 seconds after the copy, in the middle of whatever the server
// started on it is being measured under.
func CopyDir(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("cannot copy store: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("cannot copy store: %s is not a directory", src)
	}
	// src/. copies the contents, whether dst exists or not.
	if out, err := exec.Command("cp", "-R", "--reflink=auto", "--", src+"/.", dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cannot copy store %s to %s: cp: %v: %s (needs GNU cp, for --reflink)", src, dst, err, bytes.TrimSpace(out))
	}
	if out, err := exec.Command("sync", "-f", dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cannot write the copy of %s to disk: sync -f %s: %v: %s (needs GNU coreutils 8.24 or later)", src, dst, err, bytes.TrimSpace(out))
	}
	return nil
}

package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrLinked is wrapped by Lend's refusal of a path that goes through a
// symbolic link: another process would follow it wherever it then points.
var ErrLinked = errors.New("goes through a symbolic link")

// ErrMoved is wrapped when a name the lent path goes through was moved,
// created or removed while it was lent: the other process may have opened
// something else by it.
var ErrMoved = errors.New("was replaced while another program used it")

// ErrUnsettled is wrapped by Lend's refusal of a path with a folder or file
// moved moments ago: a process swapping it may be at work, and the next swap
// could come between Lend and the other process's open, where no check can
// see it.
var ErrUnsettled = errors.New("was moved moments ago")

// settle is how long ago the folders and file of a lent path must have last
// been moved.
const settle = 2 * time.Second

// Loan is a file's path handed to another process that opens it by name (an
// editor over ACP fs/*), which dsh cannot make open it without following
// links. Lend opens, without following links, every folder from the root to
// the file and watches the names the path goes through (inotify, armed on a
// folder before its next name is looked at): a folder or the file swapped for
// a link and back is seen, however short the swap. Return says whether the
// path kept its meaning.
type Loan struct {
	f      File
	notify int
	// dirs are the root's parent (when the root has one), the root, then each
	// folder down to the file's; names[i] is the name looked up in dirs[i],
	// ids[i] what it was when lent. wds maps a watch to its index in dirs.
	dirs  []*os.File
	names []string
	ids   []ident
	wds   map[int32]int
	at    int // the index in dirs of the file's folder
}

// ident names one inode: what a name led to.
type ident struct{ dev, ino uint64 }

// Lend checks that no component of the file's path, from the workspace root
// down, is a symbolic link, and watches them until Return. The file need not
// exist (a write creates it); its folders must.
func (f File) Lend() (_ *Loan, err error) {
	if f.rel == "." || f.abs != f.Real() {
		return nil, fmt.Errorf("%s %w", f.abs, ErrLinked)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", f.abs, err)
	}
	comps := split(f.rel)
	l := &Loan{f: f, notify: fd, wds: map[int32]int{}, at: len(comps) - 1}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	// Every folder is opened O_PATH: unlike a read's open, that sends no
	// inotify event, so a racer watching the tree cannot time its swap on
	// dsh's checks.
	root, err := f.w.base.OpenFile(".", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	// The other process reaches the root by its name too: its parent is
	// watched for it, and the name must still lead to the root dsh holds.
	if f.w.baseDir != "/" {
		l.at++
		if err := l.enterRoot(root); err != nil {
			_ = root.Close()
			return nil, err
		}
	}
	cur := root
	for i, c := range comps {
		if err := l.enter(cur, c); err != nil {
			return nil, err
		}
		if i == len(comps)-1 {
			break
		}
		next, err := openDir(cur, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.abs, err)
		}
		cur = next
	}
	// A name already moved while the watches were armed: something is
	// swapping this path now.
	if err := l.moved(false); err != nil {
		return nil, err
	}
	return l, nil
}

// enterRoot watches the root's parent for the root's name, which must lead
// to root.
func (l *Loan) enterRoot(root *os.File) error {
	fd, err := unix.Open(filepath.Dir(l.f.w.baseDir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Dir(l.f.w.baseDir), err)
	}
	parent := os.NewFile(uintptr(fd), filepath.Dir(l.f.w.baseDir))
	if err := l.enter(parent, filepath.Base(l.f.w.baseDir)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(root.Fd()), &st); err != nil {
		return err
	}
	if (ident{dev: st.Dev, ino: st.Ino}) != l.ids[0] {
		return fmt.Errorf("%s %w", l.f.w.baseDir, ErrMoved)
	}
	return nil
}

// enter watches dir, then looks up name in it without following a link.
// The name must be a folder or a regular file, or missing when it is the
// file's (a write creates it).
func (l *Loan) enter(dir *os.File, name string) error {
	l.dirs = append(l.dirs, dir)
	l.names = append(l.names, name)
	wd, err := unix.InotifyAddWatch(l.notify, "/proc/self/fd/"+strconv.Itoa(int(dir.Fd())),
		unix.IN_MOVED_FROM|unix.IN_MOVED_TO|unix.IN_CREATE|unix.IN_DELETE|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_ONLYDIR)
	if err != nil {
		return fmt.Errorf("watching %s: %w", l.f.abs, err)
	}
	l.wds[int32(wd)] = len(l.dirs) - 1
	id, err := lookup(dir, name)
	absent := errors.Is(err, unix.ENOENT) && l.last(len(l.dirs)-1)
	if err != nil && !absent {
		return fmt.Errorf("%s: %w", l.f.abs, err)
	}
	l.ids = append(l.ids, id.ident)
	// A rename changes the ctime, not the mtime (which a write, or a
	// folder's entries, change with the ctime). An atomic save, renamed
	// onto the name, can look moved too: the disk is used for a moment.
	if id.ctime.After(id.mtime) && time.Since(id.ctime) < settle {
		return fmt.Errorf("%s: %s %w", l.f.abs, name, ErrUnsettled)
	}
	return nil
}

// last says whether dirs[i] is the file's folder.
func (l *Loan) last(i int) bool { return i == l.at }

// entry is what a name led to.
type entry struct {
	ident
	ctime, mtime time.Time
}

// lookup is what name in dir is, without following it: a folder or a
// regular file; a link is ErrLinked.
func lookup(dir *os.File, name string) (entry, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return entry{}, err
	}
	e := entry{ident: ident{dev: st.Dev, ino: st.Ino},
		ctime: time.Unix(st.Ctim.Unix()), mtime: time.Unix(st.Mtim.Unix())}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return entry{}, fmt.Errorf("%s %w", name, ErrLinked)
	case unix.S_IFDIR, unix.S_IFREG:
		return e, nil
	}
	return entry{}, fmt.Errorf("%s is not a regular file or a folder", name)
}

// openDir opens the folder name in dir, refusing a link.
func openDir(dir *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s %w", name, ErrLinked)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Return says whether the path kept its meaning while it was lent: no name it
// goes through was moved, created or removed, and each still leads, without a
// link, where it did. After a write (wrote) the file may have been created or
// replaced by a rename (an editor's atomic save), never moved away.
func (l *Loan) Return(wrote bool) error {
	if err := l.moved(wrote); err != nil {
		return err
	}
	for i, name := range l.names {
		id, err := lookup(l.dirs[i], name)
		stillAbsent := errors.Is(err, unix.ENOENT) && l.ids[i] == ident{}
		switch {
		case l.last(i) && wrote:
			if err != nil {
				return fmt.Errorf("%s %w: %w", l.f.abs, ErrMoved, err)
			}
		case err != nil && !stillAbsent:
			return fmt.Errorf("%s %w: %w", l.f.abs, ErrMoved, err)
		case id.ident != l.ids[i]:
			return fmt.Errorf("%s %w", l.f.abs, ErrMoved)
		}
	}
	return nil
}

// moved reads the watches' events: one about a name of the path (or a
// watched folder itself moved, or events lost) is a change of meaning.
func (l *Loan) moved(wrote bool) error {
	buf := make([]byte, 16<<10)
	for {
		n, err := unix.Read(l.notify, buf)
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("watching %s: %w", l.f.abs, err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
				return fmt.Errorf("%s %w", l.f.abs, ErrMoved)
			}
			i, ok := l.wds[ev.Wd]
			if !ok || string(bytes.TrimRight(name, "\x00")) != l.names[i] {
				continue
			}
			// An atomic save renames a new file onto the name: it creates,
			// it never takes the file away.
			if l.last(i) && wrote && ev.Mask&(unix.IN_MOVED_FROM|unix.IN_DELETE) == 0 {
				continue
			}
			return fmt.Errorf("%s %w", l.f.abs, ErrMoved)
		}
	}
}

// Read reads the file where the path leads now, through the folders opened
// at Lend and without following a link: what the other process left there.
// It reads at most limit bytes.
func (l *Loan) Read(limit int64) ([]byte, error) {
	i := len(l.dirs) - 1
	fd, err := unix.Openat(int(l.dirs[i].Fd()), l.names[i], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), l.names[i])
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", l.f.abs)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// Close releases the watches and the folders.
func (l *Loan) Close() {
	_ = unix.Close(l.notify)
	for _, d := range l.dirs {
		_ = d.Close()
	}
}

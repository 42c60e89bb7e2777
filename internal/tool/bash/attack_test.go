package bash

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// attack tries what args name, from inside a command, and prints one line
// each: "<what>: done" or "<what>: refused (<error>)".
func attack(args []string) int {
	for i := 0; i < len(args); i++ {
		what, arg := args[i], ""
		if i+1 < len(args) {
			arg = args[i+1]
		}
		var err error
		switch what {
		case "unix": // connect to a pathname socket and send a payload
			i++
			var c net.Conn
			if c, err = net.DialTimeout("unix", arg, time.Second); err == nil {
				_, err = c.Write([]byte("PAYLOAD\n"))
				_ = c.Close()
			}
		case "udp": // send a datagram
			i++
			var c net.Conn
			if c, err = net.Dial("udp", arg); err == nil {
				_, err = c.Write([]byte("PAYLOAD"))
				_ = c.Close()
			}
		case "icmp":
			err = socket(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP)
		case "raw":
			err = socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
		case "packet":
			err = socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		case "vsock":
			err = socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		case "io_uring":
			var p [120]byte
			_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&p)), 0)
			err = errnoErr(e)
		case "chmod":
			i++
			err = os.Chmod(arg, 0o777)
		case "chown":
			i++
			err = os.Lchown(arg, os.Getuid(), 12345)
		case "utime":
			i++
			err = os.Chtimes(arg, time.Unix(0, 0), time.Unix(0, 0))
		case "setxattr":
			i++
			err = unix.Lsetxattr(arg, "user.dsh", []byte("x"), 0)
		case "tiocsti": // push a line into the terminal's input
			i++
			err = tiocsti(arg)
		case "tty": // write to the terminal
			var f *os.File
			if f, err = os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
				_, err = f.WriteString("\x1b]0;PWNED-TITLE\x07")
				_ = f.Close()
			}
		default:
			fmt.Printf("%s: unknown attack\n", what)
			return 2
		}
		if err != nil {
			fmt.Printf("%s: refused (%v)\n", what, err)
		} else {
			fmt.Printf("%s: done\n", what)
		}
	}
	return 0
}

func socket(domain, typ, proto int) error {
	fd, err := unix.Socket(domain, typ, proto)
	if err == nil {
		_ = unix.Close(fd)
	}
	return err
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// tiocsti pushes line into the input of the terminal behind /dev/tty and
// behind each of the command's own descriptors.
func tiocsti(line string) error {
	var last error = syscall.ENOTTY
	fds := []int{0, 1, 2}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		defer f.Close()
		fds = append(fds, int(f.Fd()))
	} else {
		last = err
	}
	for _, fd := range fds {
		ok := true
		for i := range len(line) {
			b := line[i]
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
				last, ok = e, false
				break
			}
		}
		if ok {
			return nil
		}
	}
	return last
}

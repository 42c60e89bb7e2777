package confine

import "testing"

// TestABIRights: each ABI version restricts what it introduced, and no right
// the kernel would reject is asked of an older one.
func TestABIRights(t *testing.T) {
	const truncate, ioctl = 1 << 14, 1 << 15
	for _, tc := range []struct {
		abi                 int
		truncate, ioctl     bool
		net, scoped, udpNet bool
	}{
		{1, false, false, false, false, false},
		{3, true, false, false, false, false},
		{4, true, false, true, false, false},
		{6, true, true, true, true, false},
		{7, true, true, true, true, false},
		{10, true, true, true, true, true},
	} {
		fs, net, scoped := Rights(tc.abi)
		if fs&truncate != 0 != tc.truncate || fs&ioctl != 0 != tc.ioctl || net != 0 != tc.net || scoped != 0 != tc.scoped || net > 3 != tc.udpNet {
			t.Errorf("ABI %d: fs %#x net %#x scoped %#x", tc.abi, fs, net, scoped)
		}
	}
}

package linalg

// Packed layout of B: ⌈n/nr⌉ panels; panel jp holds, for each of the k
// steps p, the nr values B[p][jp·nr … jp·nr+nr) (columns of the product), so
// a micro-kernel reads it front to back. Columns past n are zero. The
// float32 kernels read A in place.

// packBT packs b, an n×k matrix with row stride ldb whose rows are the
// columns of the product (C = A·bᵀ), into dst (⌈n/nr⌉·k·nr values).
func packBT(dst, b []float32, ldb, n, k, nr int) {
	np := (n + nr - 1) / nr
	dst = dst[:np*k*nr]
	for jp := range np {
		panel := dst[jp*k*nr : (jp+1)*k*nr]
		j0 := jp * nr
		nj := min(nr, n-j0)
		for j := range nj {
			row := b[(j0+j)*ldb : (j0+j)*ldb+k]
			for p, v := range row {
				panel[p*nr+j] = v
			}
		}
		if nj < nr {
			for p := range k {
				clear(panel[p*nr+nj : (p+1)*nr])
			}
		}
	}
}

// packBN packs b, a k×n matrix with row stride ldb (C = A·b), into dst.
func packBN(dst, b []float32, ldb, k, n, nr int) {
	np := (n + nr - 1) / nr
	dst = dst[:np*k*nr]
	for jp := range np {
		panel := dst[jp*k*nr : (jp+1)*k*nr]
		j0 := jp * nr
		nj := min(nr, n-j0)
		for p := range k {
			out := panel[p*nr : (p+1)*nr]
			copy(out, b[p*ldb+j0:p*ldb+j0+nj])
			clear(out[nj:])
		}
	}
}

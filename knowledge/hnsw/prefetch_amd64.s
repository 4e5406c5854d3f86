//go:build !purego

#include "textflag.h"

// func prefetch(p unsafe.Pointer, n uintptr)
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	ADDQ AX, CX   // CX = end
	ANDQ $-64, AX // first line
	CMPQ AX, CX
	JAE  done

loop:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, CX
	JB         loop

done:
	RET

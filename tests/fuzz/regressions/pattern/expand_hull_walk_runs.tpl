@pattern P99 hull_walk
@title Thousands of constants over one 16-bit range (the probe-hull walk)
@variants 1
@lines 1 100000
@knob n 16000 16000
@body
@for i 0 n
	v ^= $K(0, 65535);
@end

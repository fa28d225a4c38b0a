@pattern P01 x
@variants 1
@knob k 0 9223372036854775807
@body
x {{k}}

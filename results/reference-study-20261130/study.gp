# study.gp: plots of study.csv (written by frontload-measure study)
set datafile separator ','
set key outside right top
set grid
set ylabel 'L1i MPKI (simulated, zen4, I1 32 KiB 8-way 64 B)'

set terminal pngcairo size 900,560 font ',10'
set output 'mpki_vs_footprint.png'
set logscale x
set xlabel 'active footprint (functions in the plan)'
set title 'L1i MPKI vs footprint'
plot 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $4 == 5000 ? $3 : 1/0):7 with linespoints title '5000 calls/request', 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $4 == 20000 ? $3 : 1/0):7 with linespoints title '20000 calls/request'
set output 'mpki_vs_calls.png'
set xlabel 'extractor calls per request'
set title 'L1i MPKI vs calls per request'
plot 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $2 == 1 ? $4 : 1/0):7 with linespoints title '1 copies', 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $2 == 100 ? $4 : 1/0):7 with linespoints title '100 copies', 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $2 == 1000 ? $4 : 1/0):7 with linespoints title '1000 copies'
set output 'mrc.png'
set logscale x 2
set xlabel 'I1 size (KiB)'
set title 'L1i miss-ratio curve: 2 copies, 10000 calls/request'
plot 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "mrc" ? $5/1024 : 1/0):7 with linespoints title 'L1i MPKI'
unset logscale x

unset logscale x

set terminal svg size 900,560
set output 'mpki_vs_footprint.svg'
set logscale x
set xlabel 'active footprint (functions in the plan)'
set title 'L1i MPKI vs footprint'
plot 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $4 == 5000 ? $3 : 1/0):7 with linespoints title '5000 calls/request', 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $4 == 20000 ? $3 : 1/0):7 with linespoints title '20000 calls/request'
set output 'mpki_vs_calls.svg'
set xlabel 'extractor calls per request'
set title 'L1i MPKI vs calls per request'
plot 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $2 == 1 ? $4 : 1/0):7 with linespoints title '1 copies', 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $2 == 100 ? $4 : 1/0):7 with linespoints title '100 copies', 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "sweep" && $2 == 1000 ? $4 : 1/0):7 with linespoints title '1000 copies'
set output 'mrc.svg'
set logscale x 2
set xlabel 'I1 size (KiB)'
set title 'L1i miss-ratio curve: 2 copies, 10000 calls/request'
plot 'study.csv' using (strcol(6) eq "ok" && strcol(1) eq "mrc" ? $5/1024 : 1/0):7 with linespoints title 'L1i MPKI'
unset logscale x

unset logscale x

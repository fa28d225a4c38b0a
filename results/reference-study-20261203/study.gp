# study.gp: plots of study.csv (written by frontload-measure study)
set datafile separator ','
set key outside right top
set grid

set terminal pngcairo size 1000,600 font ',10'
set output 'mpki_vs_footprint.png'
set logscale x 2
set format x '%.0b %BB'
set ylabel 'MPKI (simulated, zen4, I1 32 KiB 8-way 64 B)'
set xlabel 'executed code footprint (bytes of the plan; solid L1i, dashed LL code)'
set title 'L1i and LL code MPKI vs code footprint'
unset arrow
unset label
set arrow 1 from 32768, graph 0 to 32768, graph 1 nohead dt 2 lc rgb '#555555'
set label 1 'L1i 32 KiB' at 32768, graph 0.96 rotate by 90 right font ',8'
set arrow 2 from 1048576, graph 0 to 1048576, graph 1 nohead dt 2 lc rgb '#555555'
set label 2 'LL 1 MiB' at 1048576, graph 0.96 rotate by 90 right font ',8'
plot 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "flat" ? $6 : 1/0):18 with linespoints dt 1 lc 1 title 'L1i flat, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "flat" ? $6 : 1/0):19 with linespoints dt 2 lc 1 title 'LL code flat, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $6 : 1/0):18 with linespoints dt 1 lc 2 title 'L1i zipf a=1, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $6 : 1/0):19 with linespoints dt 2 lc 2 title 'LL code zipf a=1, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "leaf" && strcol(4) eq "flat" ? $6 : 1/0):18 with points pt 7 ps 1.5 lc 1 title 'L1i flat, the running leaf', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "leaf" && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $6 : 1/0):18 with points pt 7 ps 1.5 lc 2 title 'L1i zipf a=1, the running leaf'
unset arrow
unset label
set format x '%g'
unset logscale x
set output 'mrc.png'
set logscale x 2
set ylabel 'L1i MPKI'
set xlabel 'I1 size (KiB)'
set title 'L1i miss-ratio curves: 1 MiB of code, 10000 calls/request'
plot 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "mrc" && strcol(4) eq "flat" ? $16/1024 : 1/0):18 with linespoints title 'flat', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "mrc" && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $16/1024 : 1/0):18 with linespoints title 'zipf a=1'
unset logscale x

set terminal svg size 1000,600
set output 'mpki_vs_footprint.svg'
set logscale x 2
set format x '%.0b %BB'
set ylabel 'MPKI (simulated, zen4, I1 32 KiB 8-way 64 B)'
set xlabel 'executed code footprint (bytes of the plan; solid L1i, dashed LL code)'
set title 'L1i and LL code MPKI vs code footprint'
unset arrow
unset label
set arrow 1 from 32768, graph 0 to 32768, graph 1 nohead dt 2 lc rgb '#555555'
set label 1 'L1i 32 KiB' at 32768, graph 0.96 rotate by 90 right font ',8'
set arrow 2 from 1048576, graph 0 to 1048576, graph 1 nohead dt 2 lc rgb '#555555'
set label 2 'LL 1 MiB' at 1048576, graph 0.96 rotate by 90 right font ',8'
plot 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "flat" ? $6 : 1/0):18 with linespoints dt 1 lc 1 title 'L1i flat, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "flat" ? $6 : 1/0):19 with linespoints dt 2 lc 1 title 'LL code flat, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $6 : 1/0):18 with linespoints dt 1 lc 2 title 'L1i zipf a=1, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "sweep" && $15 == 20000 && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $6 : 1/0):19 with linespoints dt 2 lc 2 title 'LL code zipf a=1, 20000 calls/req', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "leaf" && strcol(4) eq "flat" ? $6 : 1/0):18 with points pt 7 ps 1.5 lc 1 title 'L1i flat, the running leaf', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "leaf" && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $6 : 1/0):18 with points pt 7 ps 1.5 lc 2 title 'L1i zipf a=1, the running leaf'
unset arrow
unset label
set format x '%g'
unset logscale x
set output 'mrc.svg'
set logscale x 2
set ylabel 'L1i MPKI'
set xlabel 'I1 size (KiB)'
set title 'L1i miss-ratio curves: 1 MiB of code, 10000 calls/request'
plot 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "mrc" && strcol(4) eq "flat" ? $16/1024 : 1/0):18 with linespoints title 'flat', 'study.csv' using (strcol(17) eq "ok" && strcol(1) eq "mrc" && strcol(4) eq "zipf" && abs($5 - 1) < 1e-9 ? $16/1024 : 1/0):18 with linespoints title 'zipf a=1'
unset logscale x

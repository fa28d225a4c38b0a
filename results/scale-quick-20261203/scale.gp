# scale.gp: the plot of scale.csv (written by frontload-measure scale)
set datafile separator ','
set key outside right top
set grid ytics
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:*]
set ylabel 'requests/s'
set xlabel 'instances x RANKER threads each'
set title 'QPS and QPS per CPU by configuration'

set terminal pngcairo size 900,500 font ',10'
set output 'qps.png'
plot 'scale.csv' using 5:xticlabels(1) title 'QPS (summed over instances)', '' using 6 title 'QPS per CPU'

set terminal svg size 900,500
set output 'qps.svg'
plot 'scale.csv' using 5:xticlabels(1) title 'QPS (summed over instances)', '' using 6 title 'QPS per CPU'

/*
 * How a Serial young collection's pause grows with the JVM's interned strings (the StringTable, one of the weak roots
 * every young collection walks). Interns N strings, then allocates short-lived arrays for 8 s.
 *
 *   javac InternedStrings.java
 *   for n in 0 50000 200000; do
 *     taskset -c 0 java -XX:+UseSerialGC -Xmx1g -Xlog:gc:file=gc-$n.log -cp . InternedStrings $n
 *   done
 *   grep 'Pause Young' gc-N.log   # the pause times, last field
 *
 * 2026-12-04, JDK 17.0.15: p50 0.097 ms with none, 0.456 ms with 50,000, 1.593 ms with 200,000 (990, 1,300 and
 * 1,089 pauses): about 7 ns per interned string per young collection.
 */
public class InternedStrings {
    static volatile Object sink;

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        String[] kept = new String[n];
        for (int i = 0; i < n; i++) {
            kept[i] = ("lit-" + i + "-some-constant-text").intern();
        }
        long end = System.nanoTime() + 8_000_000_000L;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                sink = new byte[64];
            }
        }
        System.out.println(kept.length);
    }
}

package io.scrouter.loadtest.report;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The real-Spark check as a PNG (plain AWT, headless): query time p50 and p95 per policy on the left, sessions
 * per replica per policy on the right.
 */
public final class SparkCheckChart {

    /** What the chart needs of one policy's run. */
    public interface Run {
        String policy();

        double latency(double q);

        Map<String, Integer> sessionsPerReplica();
    }

    private static final Color[] REPLICA_COLOURS = {new Color(0x6baed6), new Color(0xfd8d3c), new Color(0x74c476),
            new Color(0x9e9ac8), new Color(0xfdd0a2), new Color(0xc7e9c0)};

    private SparkCheckChart() {
    }

    public static void write(String title, List<? extends Run> runs, Path file) throws IOException {
        int w = 1100;
        int h = 480;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString(title, 20, 24);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        latencyPanel(g, runs, 70, 70, 520, 330);
        sessionsPanel(g, runs, 680, 70, 380, 330);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static void latencyPanel(Graphics2D g, List<? extends Run> runs, int x, int y, int pw, int ph) {
        double max = runs.stream().mapToDouble(r -> r.latency(0.95)).filter(Double::isFinite).max().orElse(1) * 1.1;
        g.drawString("query time (ms): p50 (light), p95 (dark)", x, y - 10);
        axes(g, x, y, pw, ph, max);
        int group = pw / Math.max(1, runs.size());
        int bar = Math.max(6, (group - 20) / 2);
        for (int i = 0; i < runs.size(); i++) {
            Run r = runs.get(i);
            double[] v = {r.latency(0.5), r.latency(0.95)};
            Color[] c = {new Color(0x9ecae1), new Color(0x08519c)};
            for (int k = 0; k < 2; k++) {
                int bh = (int) (v[k] / max * ph);
                g.setColor(c[k]);
                g.fillRect(x + i * group + 10 + k * bar, y + ph - bh, bar - 2, bh);
                g.setColor(Color.DARK_GRAY);
                g.drawString(String.format(Locale.ROOT, "%.0f", v[k]), x + i * group + 10 + k * bar, y + ph - bh - 3);
            }
            g.setColor(Color.BLACK);
            g.drawString(r.policy(), x + i * group + 10, y + ph + 16);
        }
    }

    private static void sessionsPanel(Graphics2D g, List<? extends Run> runs, int x, int y, int pw, int ph) {
        double max = runs.stream().flatMap(r -> r.sessionsPerReplica().values().stream()).mapToInt(Integer::intValue)
                .max().orElse(1) * 1.15;
        g.drawString("sessions placed per replica", x, y - 10);
        axes(g, x, y, pw, ph, max);
        int group = pw / Math.max(1, runs.size());
        for (int i = 0; i < runs.size(); i++) {
            Run r = runs.get(i);
            int n = r.sessionsPerReplica().size();
            int bar = Math.max(4, (group - 16) / Math.max(1, n));
            int k = 0;
            for (Map.Entry<String, Integer> e : r.sessionsPerReplica().entrySet()) {
                int bh = (int) (e.getValue() / max * ph);
                g.setColor(REPLICA_COLOURS[k % REPLICA_COLOURS.length]);
                g.fillRect(x + i * group + 8 + k * bar, y + ph - bh, bar - 2, bh);
                g.setColor(Color.DARK_GRAY);
                g.drawString(String.valueOf(e.getValue()), x + i * group + 8 + k * bar, y + ph - bh - 3);
                k++;
            }
            g.setColor(Color.BLACK);
            g.drawString(r.policy(), x + i * group + 8, y + ph + 16);
        }
        int k = 0;
        for (String replica : runs.isEmpty() ? List.<String>of() : List.copyOf(runs.get(0).sessionsPerReplica().keySet())) {
            g.setColor(REPLICA_COLOURS[k % REPLICA_COLOURS.length]);
            g.fillRect(x + k * 70, y + ph + 30, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(replica, x + k * 70 + 16, y + ph + 41);
            k++;
        }
    }

    private static void axes(Graphics2D g, int x, int y, int pw, int ph, double max) {
        g.setColor(Color.BLACK);
        g.drawLine(x, y, x, y + ph);
        g.drawLine(x, y + ph, x + pw, y + ph);
        g.setColor(Color.DARK_GRAY);
        g.drawString(String.format(Locale.ROOT, "%.0f", max), x - 45, y + 4);
        g.drawString("0", x - 12, y + ph + 4);
    }
}

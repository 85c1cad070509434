package io.scrouter.loadtest.report;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Draws one scenario's comparison as a PNG with plain AWT (headless): on the left, p50/p95/p99 slowdown per
 * policy on a log scale (slowdowns span 1 to thousands when a replica drowns), p95 written above its bar; on
 * the right, the spread of sessions per replica at the snapshot (min to max), which shows herding directly.
 */
public final class ComparisonChart {

    private static final int W = 1200;
    private static final int H = 600;
    private static final Color[] PERCENTILE_COLOURS = {new Color(0x9ecae1), new Color(0x3182bd), new Color(0x08519c)};

    private ComparisonChart() {
    }

    public static void write(String title, List<Row> rows, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, W, H);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString(title, 20, 26);
        slowdownPanel(g, rows, 60, 60, 700, 360);
        sessionsPanel(g, rows, 840, 60, 330, 360);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static void slowdownPanel(Graphics2D g, List<Row> rows, int x, int y, int w, int h) {
        double max = rows.stream().mapToDouble(Row::p99).filter(Double::isFinite).max().orElse(10);
        double top = Math.ceil(Math.log10(Math.max(10, max * 1.1)));
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(Color.BLACK);
        g.drawString("query slowdown (time in system / time alone), log scale", x, y - 8);
        axes(g, x, y, w, h);
        for (int d = 0; d <= top; d++) {
            int yy = y + h - (int) (d / top * h);
            g.setColor(new Color(0xdddddd));
            g.drawLine(x + 1, yy, x + w, yy);
            g.setColor(Color.DARK_GRAY);
            g.drawString(d == 0 ? "1" : "1e" + d, x - 36, yy + 4);
        }
        int group = w / rows.size();
        int bar = Math.max(4, (group - 16) / 3);
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            double[] values = {r.p50(), r.p95(), r.p99()};
            for (int k = 0; k < 3; k++) {
                double v = Math.max(1.0, values[k]);
                int bh = (int) (Math.log10(v) / top * h);
                int bx = x + i * group + 8 + k * bar;
                g.setColor(PERCENTILE_COLOURS[k]);
                g.fillRect(bx, y + h - bh, bar - 2, Math.max(1, bh));
            }
            g.setColor(Color.DARK_GRAY);
            int bx95 = x + i * group + 8 + bar;
            int top95 = y + h - (int) (Math.log10(Math.max(1.0, r.p95())) / top * h);
            g.drawString(String.format(Locale.ROOT, "%.0f", r.p95()), bx95, top95 - 3);
            g.setColor(Color.BLACK);
            // Names at 45 degrees: a dozen contenders do not fit side by side.
            int cx = x + i * group + group / 2;
            g.rotate(-Math.PI / 4, cx, y + h + 14);
            g.drawString(r.contender(), cx - g.getFontMetrics().stringWidth(r.contender()), y + h + 14);
            g.rotate(Math.PI / 4, cx, y + h + 14);
        }
        legend(g, x + w - 190, y + 10);
    }

    private static void sessionsPanel(Graphics2D g, List<Row> rows, int x, int y, int w, int h) {
        double max = rows.stream().mapToDouble(Row::maxSessions).max().orElse(1);
        double top = Math.max(1, Math.ceil(max * 1.1));
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(Color.BLACK);
        g.drawString("sessions per replica at snapshot (min to max)", x, y - 8);
        axes(g, x, y, w, h);
        g.setColor(Color.DARK_GRAY);
        g.drawString(String.format(Locale.ROOT, "%.0f", top), x - 30, y + 4);
        g.drawString("0", x - 14, y + h + 4);
        int group = w / rows.size();
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            int cx = x + i * group + group / 2;
            int yMin = y + h - (int) (r.minSessions() / top * h);
            int yMax = y + h - (int) (r.maxSessions() / top * h);
            g.setColor(new Color(0xe6550d));
            g.setStroke(new BasicStroke(Math.max(4, group / 3f)));
            g.drawLine(cx, yMin, cx, Math.min(yMax, yMin - 2));
            g.setStroke(new BasicStroke(1));
            g.setColor(Color.BLACK);
            g.rotate(-Math.PI / 4, cx, y + h + 14);
            g.drawString(r.contender(), cx - g.getFontMetrics().stringWidth(r.contender()), y + h + 14);
            g.rotate(Math.PI / 4, cx, y + h + 14);
        }
    }

    private static void axes(Graphics2D g, int x, int y, int w, int h) {
        g.setColor(Color.BLACK);
        g.drawLine(x, y, x, y + h);
        g.drawLine(x, y + h, x + w, y + h);
    }

    private static void label(Graphics2D g, String text, int cx, int y) {
        int tw = g.getFontMetrics().stringWidth(text);
        g.drawString(text, cx - tw / 2, y);
    }

    private static void legend(Graphics2D g, int x, int y) {
        String[] names = {"p50", "p95", "p99"};
        for (int k = 0; k < 3; k++) {
            g.setColor(PERCENTILE_COLOURS[k]);
            g.fillRect(x + k * 60, y, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(names[k], x + k * 60 + 16, y + 11);
        }
    }
}

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.regex.Pattern;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.HandlerWrapper;

/**
 * DynamoDB Local bound to 127.0.0.1 only, answering only requests whose Host names the loopback. Its own main binds
 * every interface and has no option to choose one, so this builds the server from the same command-line arguments,
 * points its Jetty connector at the loopback address, puts a Host check in front of its handler, then starts it.
 * Run by local/dynamodb-local.ts as a single-file source program (java File.java ...).
 */
public class LoopbackDynamoDbLocal {
  /** Same rule as lambdas/http/loopback.ts: a web page on a rebound DNS name sends its own name, and is refused. */
  static final Pattern LOOPBACK_HOST = Pattern.compile("(?i)(localhost|127(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}|\\[::1\\])(:\\d{1,5})?");

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    Connector[] connectors = jetty.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost("127.0.0.1");
    HandlerWrapper hostCheck = new HandlerWrapper() {
      @Override
      public void handle(String target, Request base, HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
        String host = request.getHeader("Host");
        if (host != null && LOOPBACK_HOST.matcher(host.trim()).matches()) {
          super.handle(target, base, request, response);
          return;
        }
        base.setHandled(true);
        response.setStatus(403);
        response.setContentType("application/json");
        response.getWriter().write("{\"error\":\"DynamoDB Local answers only requests for localhost, 127.0.0.1 or [::1]\"}");
      }
    };
    hostCheck.setHandler(jetty.getHandler());
    jetty.setHandler(hostCheck);
    proxy.start();
    System.out.println("DynamoDB Local listening on 127.0.0.1 only");
  }
}

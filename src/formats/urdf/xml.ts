/**
 * XML text → an element tree with the line of each element, by saxes (a well-formedness
 * checking, non-validating streaming parser: no DTD processing, so no entity expansion).
 * URDF carries everything in elements and attributes; text content is not kept.
 */
import { SaxesParser } from "saxes";
import { UrdfImportError } from "./errors";

export interface XmlElement {
  /** the tag as written (a prefix kept: "xacro:macro") */
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** line (1-based) of the element's start tag */
  line: number;
}

/** Parses XML text; a malformed document throws a UrdfImportError naming the line. */
export function parseXml(text: string): XmlElement {
  const parser = new SaxesParser({ position: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  let startLine = 1;
  parser.on("opentagstart", () => {
    startLine = parser.line;
  });
  parser.on("opentag", (tag) => {
    const el: XmlElement = {
      name: tag.name,
      attrs: { ...(tag.attributes as Record<string, string>) },
      children: [],
      line: startLine,
    };
    const parent = stack.at(-1);
    if (parent) parent.children.push(el);
    else root = el;
    if (!tag.isSelfClosing) stack.push(el);
  });
  parser.on("closetag", (tag) => {
    if (!tag.isSelfClosing) stack.pop();
  });
  parser.on("error", (err) => {
    // saxes prefixes its messages with "line:column: "
    const message = err.message.replace(/^\d+:\d+: /, "");
    throw new UrdfImportError([
      {
        path: ["urdf"],
        line: parser.line,
        message: `malformed XML (column ${parser.column + 1}): ${message}`,
        code: "invalid",
      },
    ]);
  });
  parser.write(text).close();
  if (root === null)
    throw new UrdfImportError([
      { path: ["urdf"], line: 1, message: "no XML element in the text", code: "invalid" },
    ]);
  return root;
}

// The two three.js loaders mesh.ts uses (three ships no type declarations for its
// examples/jsm modules, and @types/three is not a dependency): only what is called.
declare module "three/examples/jsm/loaders/STLLoader.js" {
  export class STLLoader {
    parse(data: ArrayBuffer | string): { getAttribute(name: "position"): { array: Float32Array } };
  }
}

declare module "three/examples/jsm/loaders/OBJLoader.js" {
  export class OBJLoader {
    parse(text: string): { traverse(visit: (object: unknown) => void): void };
  }
}

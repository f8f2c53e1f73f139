/**
 * URDF import (POST /v1/models/urdf, `moreau import`): the request (the URDF text, the
 * mesh files it references, options) and the answer (a Moreau model and the warnings of
 * what was mapped approximately or left out). The converter is src/formats/urdf/.
 */
import { z } from "zod";
import { Model } from "./model";

/** Bytes one mesh file may decode to (a larger one is refused naming it, 413). */
export const MESH_MAX_BYTES = 8 * 1024 * 1024;
/** Triangles one mesh file may hold (413 beyond). */
export const MESH_MAX_TRIANGLES = 200_000;
/** Files one import may upload. */
export const MAX_MESH_FILES = 256;

export const FileContent = z
  .union([
    z.string().meta({
      description:
        "base64 when it is only base64 characters (no spaces, length a multiple of 4), else UTF-8 text (ASCII STL, OBJ)",
    }),
    z.strictObject({ base64: z.string() }),
    z.strictObject({ text: z.string() }),
  ])
  .meta({ id: "MeshFileContent" });
export type FileContent = z.infer<typeof FileContent>;

const positive = () => z.number().positive();

export const UrdfImportOptions = z
  .strictObject({
    floating: z.boolean().default(false).meta({
      description:
        "the root link is a free body (it needs a mass); false: it is fixed where it is (a root link named `world` is always fixed)",
    }),
    actuators: z
      .discriminatedUnion("type", [
        z.strictObject({ type: z.literal("none") }),
        z.strictObject({ type: z.literal("torque") }),
        z.strictObject({
          type: z.literal("position"),
          kp: positive().meta({ description: "N·m/rad or N/m, every joint" }),
          kd: z.number().nonnegative().default(0).meta({ description: "N·m·s/rad or N·s/m" }),
          joints: z
            .record(
              z.string(),
              z.strictObject({
                kp: positive().optional(),
                kd: z.number().nonnegative().optional(),
              }),
            )
            .optional()
            .meta({ description: "gains of some joints (by URDF joint name), replacing kp, kd" }),
        }),
        z.strictObject({
          type: z.literal("velocity"),
          kv: positive().meta({ description: "N·m·s/rad or N·s/m, every joint" }),
          joints: z
            .record(z.string(), z.strictObject({ kv: positive() }))
            .optional()
            .meta({ description: "gains of some joints (by URDF joint name), replacing kv" }),
        }),
      ])
      .default({ type: "torque" })
      .meta({
        description:
          "the actuator given to every revolute, continuous and prismatic joint with a non-zero <limit effort> (its effortLimit); none: no actuators",
      }),
    fixedJoints: z.enum(["lump", "keep"]).default("lump").meta({
      description:
        "lump: a link on a fixed joint joins its parent's body (masses, centres of mass and inertias combined), as Gazebo does; keep: it stays a body of its own held by a fixed joint (a link without mass is lumped either way)",
    }),
    collisionMeshes: z.enum(["convex", "mesh"]).default("convex").meta({
      description:
        "a collision <mesh> becomes a convex shape (the hull of its vertices) or a mesh shape (its triangles; on a moving link a closed surface)",
    }),
    dropUnsupported: z.boolean().default(false).meta({
      description:
        "collision <mesh> elements whose files were not uploaded are dropped with a warning instead of refused",
    }),
    balanceInertia: z.boolean().default(false).meta({
      description:
        "an inertia whose principal moments no body has (the largest over the sum of the other two) gets the three moments set to their mean, as MuJoCo's compiler balanceinertia does, with a warning; false: it is refused at its <inertia> element",
    }),
    name: z
      .string()
      .max(256)
      .optional()
      .meta({ description: "the model's name; default the robot's" }),
  })
  .meta({ id: "UrdfImportOptions" });

export const UrdfImportBody = z
  .strictObject({
    urdf: z.string().min(1).meta({ description: "the URDF XML text (xacro expanded)" }),
    files: z
      .record(z.string().min(1).max(1024), FileContent)
      .default({})
      .refine((f) => Object.keys(f).length <= MAX_MESH_FILES, {
        message: `at most ${MAX_MESH_FILES} files`,
      })
      .meta({
        description:
          "mesh files by name: the <mesh filename> as written, without its scheme (package://), or a trailing part of it (meshes/link1.stl, link1.stl)",
      }),
    options: UrdfImportOptions.default({
      floating: false,
      actuators: { type: "torque" },
      fixedJoints: "lump",
      collisionMeshes: "convex",
      dropUnsupported: false,
      balanceInertia: false,
    }),
  })
  .meta({ id: "UrdfImportRequest" });

export const UrdfImportResult = z
  .object({
    model: Model,
    warnings: z.array(z.string()).meta({
      description: "what was left out or mapped approximately (visual geometry, friction, …)",
    }),
  })
  .meta({ id: "UrdfImport" });

export type UrdfImportOptionsIn = z.input<typeof UrdfImportOptions>;
export type UrdfImportOptionsSpec = z.output<typeof UrdfImportOptions>;
export type UrdfImportBodySpec = z.output<typeof UrdfImportBody>;
export type UrdfImportResultOut = z.output<typeof UrdfImportResult>;

/* SPDX-License-Identifier: Apache-2.0 */
/* urdf_parse.cc — the only C++ of the library: reads URDF text with urdfdom and copies what grit uses
 * into the plain C description of urdf_internal.h (no C++ type or exception crosses the interface).
 *
 * urdfdom reports problems only through console_bridge's process-wide log (to stderr by default). To
 * give them to the caller as a message instead, the parse runs with an output handler that collects
 * them; console_bridge has a single handler for the whole process, so parses are serialized by a mutex
 * for the time of the call (the one piece of shared state, forced by that library's interface). */
#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>

#include "urdf_internal.h"

namespace {

class collector : public console_bridge::OutputHandler {
 public:
  std::string text;
  void log(const std::string &t, console_bridge::LogLevel level, const char *, int) override {
    if (level < console_bridge::CONSOLE_BRIDGE_LOG_ERROR) return; /* warnings and below are not failures */
    if (!text.empty()) text += "; ";
    text += t;
  }
};

std::mutex &log_mutex() {
  static std::mutex m;
  return m;
}

void copy_pose(urdf_pose *out, const urdf::Pose &p) {
  out->pos[0] = p.position.x, out->pos[1] = p.position.y, out->pos[2] = p.position.z;
  out->quat[0] = p.rotation.w, out->quat[1] = p.rotation.x;
  out->quat[2] = p.rotation.y, out->quat[3] = p.rotation.z;
}

/* Returns 0 when out of memory. */
int copy_link(urdf_link *out, const urdf::Link &l) {
  if (l.inertial) {
    const urdf::Inertial &in = *l.inertial;
    out->has_inertial = 1;
    copy_pose(&out->inertial, in.origin);
    out->mass = in.mass;
    out->ixx = in.ixx, out->ixy = in.ixy, out->ixz = in.ixz;
    out->iyy = in.iyy, out->iyz = in.iyz, out->izz = in.izz;
  } else {
    out->inertial.quat[0] = 1;
  }
  const size_t n = l.collision_array.size();
  out->geoms = static_cast<urdf_geom *>(std::calloc(n + 1, sizeof(urdf_geom)));
  if (!out->geoms) return 0;
  for (size_t i = 0; i < n; ++i) {
    const urdf::Collision *c = l.collision_array[i].get();
    urdf_geom *g = &out->geoms[out->ngeom++];
    g->scale[0] = g->scale[1] = g->scale[2] = 1;
    g->origin.quat[0] = 1;
    if (!c || !c->geometry) {
      g->type = -1;
      continue;
    }
    copy_pose(&g->origin, c->origin);
    const urdf::Geometry *geo = c->geometry.get();
    switch (geo->type) {
      case urdf::Geometry::BOX: {
        const urdf::Box *b = static_cast<const urdf::Box *>(geo);
        g->type = URDF_GEOM_BOX;
        g->size[0] = b->dim.x, g->size[1] = b->dim.y, g->size[2] = b->dim.z;
        break;
      }
      case urdf::Geometry::CYLINDER: {
        const urdf::Cylinder *cy = static_cast<const urdf::Cylinder *>(geo);
        g->type = URDF_GEOM_CYLINDER;
        g->size[0] = cy->radius, g->size[1] = cy->length;
        break;
      }
      case urdf::Geometry::SPHERE:
        g->type = URDF_GEOM_SPHERE;
        g->size[0] = static_cast<const urdf::Sphere *>(geo)->radius;
        break;
      case urdf::Geometry::MESH: {
        const urdf::Mesh *m = static_cast<const urdf::Mesh *>(geo);
        g->type = URDF_GEOM_MESH;
        g->scale[0] = m->scale.x, g->scale[1] = m->scale.y, g->scale[2] = m->scale.z;
        g->filename = static_cast<char *>(std::malloc(m->filename.size() + 1));
        if (!g->filename) return 0;
        std::memcpy(g->filename, m->filename.c_str(), m->filename.size() + 1);
        break;
      }
      default: g->type = -1;
    }
  }
  return 1;
}

void copy_joint(urdf_joint *out, const urdf::Joint &j) {
  out->type = static_cast<int>(j.type);
  copy_pose(&out->origin, j.parent_to_joint_origin_transform);
  out->axis[0] = j.axis.x, out->axis[1] = j.axis.y, out->axis[2] = j.axis.z;
  if (j.limits) {
    out->has_limit = 1;
    out->lower = j.limits->lower, out->upper = j.limits->upper;
    out->effort = j.limits->effort, out->velocity = j.limits->velocity;
  }
  if (j.dynamics) {
    out->has_dynamics = 1;
    out->damping = j.dynamics->damping, out->friction = j.dynamics->friction;
  }
}

void set_msg(char *msg, size_t size, const std::string &s) {
  if (!msg || !size) return;
  std::strncpy(msg, s.c_str(), size - 1);
  msg[size - 1] = '\0';
}

int parse(const char *data, size_t size, int nlink, const char *const *link_names, int njoint,
          const char *const *joint_names, urdf_robot **robot, char *msg, size_t msg_size) {
  urdf::ModelInterfaceSharedPtr model;
  collector log;
  {
    std::lock_guard<std::mutex> lock(log_mutex());
    console_bridge::useOutputHandler(&log);
    try {
      model = urdf::parseURDF(std::string(data, size));
    } catch (...) {
      console_bridge::restorePreviousOutputHandler();
      throw;
    }
    console_bridge::restorePreviousOutputHandler();
  }
  /* urdfdom logs some errors and still returns a model without the bad part (a link whose <inertial>
   * it could not read comes back massless): any error is a failure. */
  if (!model || !log.text.empty()) {
    set_msg(msg, msg_size, log.text.empty() ? std::string("urdfdom refused the file") : log.text);
    return 1;
  }
  urdf_robot *r = static_cast<urdf_robot *>(std::calloc(1, sizeof(urdf_robot)));
  if (!r) return 2;
  *robot = r;
  r->links = static_cast<urdf_link *>(std::calloc(static_cast<size_t>(nlink) + 1, sizeof(urdf_link)));
  r->joints = static_cast<urdf_joint *>(std::calloc(static_cast<size_t>(njoint) + 1, sizeof(urdf_joint)));
  if (!r->links || !r->joints) return 2;
  r->nlink = nlink;
  r->njoint = njoint;
  for (int i = 0; i < nlink; ++i) {
    urdf::LinkConstSharedPtr l = model->getLink(link_names[i]);
    if (!l) {
      set_msg(msg, msg_size, std::string("urdfdom lost the link ") + link_names[i]);
      return 1;
    }
    if (!copy_link(&r->links[i], *l)) return 2;
  }
  for (int i = 0; i < njoint; ++i) {
    urdf::JointConstSharedPtr j = model->getJoint(joint_names[i]);
    if (!j) {
      set_msg(msg, msg_size, std::string("urdfdom lost the joint ") + joint_names[i]);
      return 1;
    }
    copy_joint(&r->joints[i], *j);
  }
  return 0;
}

} // namespace

extern "C" int urdf_parse(const char *data, size_t size, int nlink, const char *const *link_names, int njoint,
                          const char *const *joint_names, urdf_robot **robot, char *msg, size_t msg_size) {
  *robot = nullptr;
  int r;
  try {
    r = parse(data, size, nlink, link_names, njoint, joint_names, robot, msg, msg_size);
  } catch (const std::bad_alloc &) {
    r = 2;
  } catch (const std::exception &e) {
    set_msg(msg, msg_size, std::string("urdfdom: ") + e.what());
    r = 1;
  } catch (...) {
    set_msg(msg, msg_size, "urdfdom failed");
    r = 1;
  }
  if (r != 0) {
    urdf_robot_free(*robot);
    *robot = nullptr;
  }
  return r;
}

extern "C" void urdf_robot_free(urdf_robot *robot) {
  if (!robot) return;
  for (int i = 0; robot->links && i < robot->nlink; ++i) {
    for (int k = 0; k < robot->links[i].ngeom; ++k) std::free(robot->links[i].geoms[k].filename);
    std::free(robot->links[i].geoms);
  }
  std::free(robot->links);
  std::free(robot->joints);
  std::free(robot);
}
